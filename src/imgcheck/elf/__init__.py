"""Reading ELF shared objects from bytes: soname, symbol versions defined and needed."""
