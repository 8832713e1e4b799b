"""What the campaign engine (`jobs`) and the analysis (`analysis`) share: errors, atomic writes, argument
types, UTC time stamps and the campaign directory layout. Imports nothing from either of them."""
