#!/usr/bin/env python3
"""The face detector (`gravity: face`, `blur-faces`, `faces: true`) against OpenCV's
YuNet detector (`cv2.FaceDetectorYN`, from PyPI's opencv-python-headless, running the
same network file) on 2 MP photographs with annotated faces, side by side in one run.

The photographs are made from the public-domain and CC0 pictures of bench/faces/
(README.md there says where each comes from): the portrait of Eileen Collins pasted at
known places, sizes (40-300 px faces), mirrorings and exposures onto 1920x1080
backgrounds, 1-3 faces each, so every face's box is known; and the backgrounds alone,
which have none. Prints, for ours and the reference:
- recall of faces >= 40 px at IoU >= 0.4 (goal >= 0.9);
- false faces per 10 photos (goal <= 1);
and our milliseconds per 2 MP photo on one core: detection, and a 512x512 cover resize
with `gravity: face` less one with `gravity: center` (goal <= 25 ms added). Our recall
is printed twice: at the size `blur-faces` and `faces: true` look at (longest side
960, the one OpenCV runs at here) and at the smaller one `gravity: face` looks at
(640: `crop_faces` in the example's output).

    bench/faces.py [--example PATH] [--photos N] [--seed N] [--runs N]

Needs python3 with numpy and opencv-python-headless, and the `faces` example built
(`cargo build --release --example faces`; give its path with --example).
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODEL = os.path.join(ROOT, "models", "yunet_n.onnx")
PORTRAIT = os.path.join(HERE, "faces", "astronaut.jpg")
BACKGROUNDS = ["coffee.jpg", "chelsea.jpg", "rocket.jpg", "hubble.jpg"]
# The face in astronaut.jpg (512x512), forehead to chin, ear to ear: x, y, w, h.
FACE = (172, 76, 108, 136)
# The part of the portrait pasted: the head and some shoulder.
HEAD = (120, 20, 230, 260)
SIZE = (1920, 1080)
MIN_FACE = 40
IOU = 0.4


def iou(a, b):
    ax, ay, aw, ah = a[:4]
    bx, by, bw, bh = b[:4]
    w = max(0.0, min(ax + aw, bx + bw) - max(ax, bx))
    h = max(0.0, min(ay + ah, by + bh) - max(ay, by))
    inter = w * h
    union = aw * ah + bw * bh - inter
    return inter / union if union > 0 else 0.0


def background(name, rng):
    """A background at 1920x1080: a picture of bench/faces, cropped to 16:9 and scaled."""
    picture = cv2.imread(os.path.join(HERE, "faces", name))
    h, w = picture.shape[:2]
    ch = min(h, int(w * 9 / 16))
    cw = int(ch * 16 / 9)
    x, y = rng.randint(0, w - cw), rng.randint(0, h - ch)
    return cv2.resize(picture[y:y + ch, x:x + cw], SIZE, interpolation=cv2.INTER_CUBIC)


def paste(canvas, head, face_width, at, flip, gain):
    """The head scaled so its face is `face_width` wide, at `at`, feathered edges; the
    face's box in the canvas."""
    k = face_width / FACE[2]
    hx, hy, hw, hh = HEAD
    patch = head
    if flip:
        patch = patch[:, ::-1]
    patch = cv2.resize(patch, (max(1, round(hw * k)), max(1, round(hh * k))), interpolation=cv2.INTER_AREA)
    patch = np.clip(patch.astype(np.float32) * gain, 0, 255)
    ph, pw = patch.shape[:2]
    mask = np.zeros((ph, pw), np.float32)
    border = max(2, pw // 12)
    mask[border:-border, border:-border] = 1.0
    mask = cv2.GaussianBlur(mask, (0, 0), border / 2)[..., None]
    x, y = at
    region = canvas[y:y + ph, x:x + pw].astype(np.float32)
    canvas[y:y + ph, x:x + pw] = (patch * mask + region * (1 - mask)).astype(np.uint8)
    fx = (FACE[0] - hx) if not flip else (hx + hw - FACE[0] - FACE[2])
    return (x + fx * k, y + (FACE[1] - hy) * k, FACE[2] * k, FACE[3] * k)


def make_photos(directory, count, rng):
    """`count` photos with faces and one of each background without; their faces."""
    portrait = cv2.imread(PORTRAIT)
    hx, hy, hw, hh = HEAD
    head = portrait[hy:hy + hh, hx:hx + hw]
    truth = {}
    for n in range(count):
        canvas = background(BACKGROUNDS[n % len(BACKGROUNDS)], rng)
        faces, taken = [], []
        for _ in range(rng.randint(1, 3)):
            for _attempt in range(20):
                width = rng.choice([rng.uniform(40, 80), rng.uniform(80, 300)])
                k = width / FACE[2]
                pw, ph = round(hw * k), round(hh * k)
                x, y = rng.randint(0, SIZE[0] - pw - 1), rng.randint(0, SIZE[1] - ph - 1)
                if all(x + pw < a or a + b < x or y + ph < c or c + d < y for a, c, b, d in taken):
                    taken.append((x, y, pw, ph))
                    faces.append(paste(canvas, head, width, (x, y), rng.random() < 0.5, rng.uniform(0.7, 1.2)))
                    break
        path = os.path.join(directory, f"faces-{n:03d}.jpg")
        cv2.imwrite(path, canvas, [cv2.IMWRITE_JPEG_QUALITY, 90])
        truth[path] = faces
    for n, name in enumerate(BACKGROUNDS * 2):
        path = os.path.join(directory, f"none-{n:03d}.jpg")
        cv2.imwrite(path, background(name, rng), [cv2.IMWRITE_JPEG_QUALITY, 90])
        truth[path] = []
    return truth


def reference(paths):
    """OpenCV's FaceDetectorYN on each photo at the same size ours looks at (longest
    side 960), its default thresholds but ours (score 0.6, NMS 0.3); boxes and ms."""
    found, times = {}, []
    cv2.setNumThreads(1)
    detector = cv2.FaceDetectorYN.create(MODEL, "", (320, 320), 0.6, 0.3, 5000)
    for path in paths:
        photo = cv2.imread(path)
        h, w = photo.shape[:2]
        k = min(1.0, 960 / max(w, h))
        start = time.perf_counter()
        small = cv2.resize(photo, (round(w * k), round(h * k)), interpolation=cv2.INTER_LINEAR)
        detector.setInputSize((small.shape[1], small.shape[0]))
        _, faces = detector.detect(small)
        times.append((time.perf_counter() - start) * 1000)
        faces = [] if faces is None else faces
        found[path] = [(f[0] / k, f[1] / k, f[2] / k, f[3] / k, float(f[-1])) for f in faces]
    return found, times


def ours(example, paths, runs):
    out = subprocess.run([example, *paths], capture_output=True, text=True, check=True,
                         env={**os.environ, "RAYON_NUM_THREADS": "1", "FACES_RUNS": str(runs)})
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    return ({row["file"]: row["faces"] for row in rows},
            {row["file"]: row.get("crop_faces", []) for row in rows}, rows)


def score(truth, found):
    """Recall of faces >= MIN_FACE px at IoU >= IOU, and false faces per 10 photos."""
    hits = total = false = 0
    for path, faces in truth.items():
        boxes = list(found.get(path, []))
        for face in faces:
            best = max(boxes, key=lambda b: iou(face, b), default=None)
            matched = best is not None and iou(face, best) >= IOU
            if matched:
                boxes.remove(best)
            if face[2] >= MIN_FACE:
                total += 1
                hits += matched
        false += len(boxes)
    return hits / max(total, 1), total, 10 * false / len(truth)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--example", default=os.path.join(ROOT, "target", "release", "examples", "faces"))
    parser.add_argument("--photos", type=int, default=40)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--runs", type=int, default=5, help="timed runs per photo (the median is kept)")
    args = parser.parse_args()
    if not os.path.exists(args.example):
        sys.exit(f"no {args.example}: cargo build --release --example faces")
    with tempfile.TemporaryDirectory() as directory:
        truth = make_photos(directory, args.photos, random.Random(args.seed))
        paths = sorted(truth)
        ours_found, crop_found, rows = ours(args.example, paths, args.runs)
        ref_found, ref_ms = reference(paths)
    faces = sum(len(f) for f in truth.values())
    print(f"{len(paths)} photos of 1920x1080, {faces} faces ({args.photos} with faces, "
          f"{len(paths) - args.photos} without)")
    for name, found in (("ours", ours_found), ("ours for crops", crop_found), ("OpenCV YuNet", ref_found)):
        recall, total, false = score(truth, found)
        print(f"{name:>14}: recall {recall:.3f} of {total} faces >= {MIN_FACE} px at IoU >= {IOU}; "
              f"{false:.2f} false faces per 10 photos")
    detect = statistics.median(r["detect_ms"] for r in rows)
    added = statistics.median(r["resize_face_ms"] - r["resize_center_ms"] for r in rows)
    print(f"ours: detection {detect:.1f} ms per 2 MP photo (median, one core); "
          f"gravity face adds {added:.1f} ms to a 512x512 cover resize "
          f"({statistics.median(r['resize_center_ms'] for r in rows):.1f} ms with center)")
    print(f"OpenCV YuNet: {statistics.median(ref_ms):.1f} ms per photo (median, one thread, resize included); "
          f"ratio ours/OpenCV {detect / statistics.median(ref_ms):.2f}")


if __name__ == "__main__":
    main()
