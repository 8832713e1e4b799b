"""A record's checksum over a text that is not the kernels' own output (what a standard tool did, a user
program's result value): FNV-1a 64 over the text's SHA-256, in the records' "fnv1a64:<16 hex>" form."""

import hashlib


def text_checksum(text: str) -> str:
    h = 0xCBF29CE484222325
    for b in hashlib.sha256(text.encode()).digest():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"fnv1a64:{h:016x}"
