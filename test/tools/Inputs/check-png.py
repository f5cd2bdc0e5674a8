#!/usr/bin/env python3
# ===- check-png.py - Is a screenshot more than a blank page? -------------===#
#
# Test helper (standard library only): decodes an 8-bit RGB/RGBA PNG
# (zlib-inflated IDAT, per-row filters undone) and prints its size, the
# share of pixels that are not near-white and the number of distinct
# colours. Exits 1 if the image is (almost) blank: fewer non-white pixels
# or colours than asked.
#
# Usage: check-png.py FILE [--min-ink FRACTION] [--min-colours N]
#
# ===----------------------------------------------------------------------===#
import struct
import sys
import zlib


def decode(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG file")
    pos, idat, width, height, ctype, depth = 8, b"", 0, 0, 0, 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    if depth != 8 or ctype not in (2, 6):
        sys.exit(f"{path}: only 8-bit RGB/RGBA PNGs are supported "
                 f"(depth {depth}, colour type {ctype})")
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        off = y * (stride + 1)
        ftype, line = raw[off], bytearray(raw[off + 1 : off + 1 + stride])
        if ftype == 2:  # Up: whole-row, no dependency inside the row
            line = bytearray((x + y) & 255 for x, y in zip(line, prev))
        elif ftype in (1, 3, 4):
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                if ftype == 1:
                    line[i] = (line[i] + a) & 255
                elif ftype == 3:
                    line[i] = (line[i] + (a + b) // 2) & 255
                else:
                    c = prev[i - bpp] if i >= bpp else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                    line[i] = (line[i] + pred) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__ or "usage: check-png.py FILE")
    path, min_ink, min_colours = args[0], 0.01, 8
    if "--min-ink" in args:
        min_ink = float(args[args.index("--min-ink") + 1])
    if "--min-colours" in args:
        min_colours = int(args[args.index("--min-colours") + 1])
    width, height, bpp, rows = decode(path)
    ink, colours = 0, set()
    for line in rows:
        pixels = list(zip(line[0::bpp], line[1::bpp], line[2::bpp]))
        colours.update(pixels)
        ink += sum(1 for r, g, b in pixels if r < 235 or g < 235 or b < 235)
    share = ink / float(width * height)
    print(f"{path}: {width}x{height}, {share * 100:.1f}% non-white pixels, "
          f"{len(colours)} colours")
    if share < min_ink or len(colours) < min_colours:
        print(f"{path}: looks blank (need at least {min_ink * 100:.1f}% "
              f"non-white pixels and {min_colours} colours)")
        sys.exit(1)


if __name__ == "__main__":
    main()
