"""Shell command lines: parsing, the walk to simple commands, wrappers, embedded code."""
