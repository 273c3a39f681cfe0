"""The folders `make install` put CAIRN in; None in a source checkout (make install
writes this file again with the real folders)."""
BINDIR = None
LIBDIR = None
