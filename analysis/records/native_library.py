"""The analysis's compiled records.jsonl reader (analysis/native/, built by `make native` into
build/lib/libsb_native.so), loaded once through ctypes with every function's signature (sbr_*, used by
analysis/records/native_reader.py).

Calls through ctypes release the GIL, so the reader's threads run beside Python. Without the library,
or with SCALEBENCH_NATIVE=0, `load()` returns None and the analysis reads records in Python, which
gives the same tables (tests/analysis/test_native_records.py).
"""

from __future__ import annotations

import ctypes
import os
import warnings
from pathlib import Path

from sbcore.install import source_root

LIBRARY = source_root() / "build" / "lib" / "libsb_native.so"

_loaded: ctypes.CDLL | None = None
_unloadable: set[Path] = set()  # libraries that failed to load: warned about once


def load() -> ctypes.CDLL | None:
    """The library with its signatures declared, or None when it is not built or switched off."""
    global _loaded
    if os.environ.get("SCALEBENCH_NATIVE", "1") == "0" or not LIBRARY.is_file() or LIBRARY in _unloadable:
        return None
    if _loaded is None:
        try:
            lib = ctypes.CDLL(str(LIBRARY))
        except OSError as err:  # e.g. built on another machine, libsimdjson missing here
            warnings.warn(f"{LIBRARY}: not loadable ({err}); reading records in Python", stacklevel=2)
            _unloadable.add(LIBRARY)
            return None
        _declare_reader(lib)
        _loaded = lib
    return _loaded


def _declare_reader(lib: ctypes.CDLL) -> None:
    pointer, text = ctypes.c_void_p, ctypes.c_char_p
    lib.sbr_read.restype = pointer
    lib.sbr_read.argtypes = [
        ctypes.c_int64,
        ctypes.POINTER(text),
        ctypes.POINTER(ctypes.c_int64),
        ctypes.POINTER(text),
        ctypes.c_int,
    ]
    for name, result in (
        ("sbr_rows", ctypes.c_int64),
        ("sbr_any_rank_wall", ctypes.c_int),
        ("sbr_taken", ctypes.POINTER(ctypes.c_uint8)),
        ("sbr_entries", ctypes.c_int64),
        ("sbr_values_count", ctypes.c_int64),
    ):
        getattr(lib, name).restype = result
        getattr(lib, name).argtypes = [pointer]
    lib.sbr_column.argtypes = [pointer, ctypes.c_int, pointer, pointer, ctypes.c_int]
    lib.sbr_kinds.restype = ctypes.c_int
    lib.sbr_kinds.argtypes = [pointer, ctypes.c_int]
    lib.sbr_entry_arrays.argtypes = [pointer, pointer, pointer, pointer, pointer]
    lib.sbr_hw_values.argtypes = [pointer, pointer, pointer]
    lib.sbr_strings.restype = ctypes.c_int64
    lib.sbr_strings.argtypes = [
        pointer,
        ctypes.c_int,
        ctypes.POINTER(text),
        ctypes.POINTER(ctypes.POINTER(ctypes.c_int64)),
    ]
    lib.sbr_free.argtypes = [pointer]
    lib.sbl_list.restype = None
    lib.sbl_list.argtypes = [
        text,
        ctypes.c_int64,
        ctypes.POINTER(text),
        text,
        text,
        ctypes.c_int,
        pointer,
        pointer,
    ]
