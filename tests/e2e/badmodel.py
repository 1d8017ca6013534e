#!/usr/bin/env python3
"""tests/e2e/badmodel.py KIND VALID.pt OUT.pt: a hostile TorchScript file
made from a valid one, for the archive limits (runtime/loader/archive.h).

KIND: newlines (the code file padded with 32 MiB of newlines: a valid
archive of ~40 KB that crashed libtorch's parser), bomb (the code file
replaced by a deflated entry of 2 GiB of newlines, ~2 MB), entries (70000
entries), nesting (5000 nested brackets in the code), truncated (the
archive cut in half), notzip (text). The archive is written by hand, so
that sizes and methods are exactly as given.
"""
import struct
import sys
import zlib
import zipfile


def deflate_repeated(chunk, times):
    """chunk * times, deflated: one block compressed once and repeated
    (a full flush leaves no reference across blocks), then an empty final
    block."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(times):
        crc = zlib.crc32(chunk, crc)
    return block * times + b"\x03\x00", len(chunk) * times, crc


def write_zip(path, entries):
    """entries: (name, method, stored_bytes, uncompressed_size, crc)."""
    body, central, off = [], [], 0
    for name, method, data, usize, crc in entries:
        n = name.encode()
        local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0, crc,
                            len(data), usize, len(n), 0) + n
        body.append(local + data)
        central.append(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method,
                                   0, 0, crc, len(data), usize, len(n), 0, 0, 0, 0, 0,
                                   off) + n)
        off += len(local) + len(data)
    cd = b"".join(central)
    n, z64 = len(entries), b""
    if n > 0xFFFF:   # zip64 end records, the classic one saturated
        z64 = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n, len(cd), off)
        z64 += struct.pack("<IIQI", 0x07064B50, 0, off + len(cd), 1)
        n = 0xFFFF
    eocd = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, len(cd), off, 0)
    with open(path, "wb") as f:
        f.write(b"".join(body) + cd + z64 + eocd)


def entry(name, data, method=0):
    crc = zlib.crc32(data)
    if method == 8:
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        return (name, 8, c.compress(data) + c.flush(), len(data), crc)
    return (name, 0, data, len(data), crc)


def main():
    kind, src, out = sys.argv[1:4]
    z = zipfile.ZipFile(src)
    files = [(i.filename, z.read(i.filename)) for i in z.infolist()]
    code = next(n for n, _ in files if n.endswith("/code/__torch__.py"))
    ents = []
    for name, data in files:
        if name == code and kind == "newlines":
            ents.append(entry(name, data + b"\n" * (32 << 20), 8))
        elif name == code and kind == "bomb":
            comp, size, crc = deflate_repeated(b"\n" * (16 << 20), 128)
            ents.append((name, 8, comp, size, crc))
        elif name == code and kind == "nesting":
            deep = b"(" * 5000 + b"x" + b")" * 5000
            ents.append(entry(name, data.replace(b"return ", b"return " + deep + b" + ", 1), 8))
        else:
            ents.append(entry(name, data, 8 if name.endswith(".py") else 0))
    if kind == "entries":
        ents += [entry("%s/extra/e%d" % (code.split("/")[0], i), b"") for i in range(70000)]
    if kind == "notzip":
        open(out, "w").write("this is text, not a model\n")
        return
    write_zip(out, ents)
    if kind == "truncated":
        with open(out, "r+b") as f:
            f.truncate(f.seek(0, 2) // 2)


main()
