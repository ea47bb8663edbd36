"""Version strings compared by their own ecosystem's rules (packaging.version cannot parse these)."""
