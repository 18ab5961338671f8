#!/usr/bin/env python3
"""Compares two safetensors files tensor by tensor with Python's standard library only (an
independent reading of the format): prints the largest relative difference ||a - b|| / ||b||
over the tensors and exits 1 if it exceeds the tolerance given."""
import array, json, math, struct, sys

FORMATS = {"F32": "f", "F64": "d"}

def read(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        lo, hi = info["data_offsets"]
        values = array.array(FORMATS[info["dtype"]])
        values.frombytes(body[lo:hi])
        if sys.byteorder != "little":
            values.byteswap()
        out[name] = values
    return out

def main():
    a, b, tolerance = read(sys.argv[1]), read(sys.argv[2]), float(sys.argv[3])
    if sorted(a) != sorted(b):
        print("the files hold different tensors:", sorted(set(a) ^ set(b)))
        return 1
    worst, worst_name, worst_abs = 0.0, "", 0.0
    for name in sorted(a):
        x, y = a[name], b[name]
        diff = math.sqrt(sum((p - q) ** 2 for p, q in zip(x, y)))
        norm = math.sqrt(sum(q * q for q in y)) or 1.0
        rel = diff / norm
        worst_abs = max(worst_abs, max((abs(p - q) for p, q in zip(x, y)), default=0.0))
        if rel >= worst:
            worst, worst_name = rel, name
    identical = all(a[n] == b[n] for n in a)
    print(f"{len(a)} tensors, largest relative difference {worst:.3e} ({worst_name}), largest absolute "
          f"{worst_abs:.3e}{', bit-identical' if identical else ''}")
    return 0 if worst <= tolerance else 1

if __name__ == "__main__":
    sys.exit(main())
