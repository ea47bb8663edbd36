"""Where image bytes come from: archives, layouts, registries, daemons."""
