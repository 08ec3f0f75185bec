#!/usr/bin/env python3
"""SVG and PDF sources against their command-line renderers, on the same files.

    bench/svg_pdf.py [--bin PATH] [--runs N]

Needs python3, poppler-utils (pdftoppm) and, for the SVG row, resvg's command-line
tool on PATH (`cargo install resvg`; without it the row prints ours alone). Without
--bin a release binary is built first.

1. SVG: a logo (gradients, paths, a stroke, text in the bundled font) drawn to 2048 px
   wide as PNG: POST to done of `resize-image {width: 2048, format: png}` against
   `resvg -w 2048 logo.svg out.png` (process start included on both sides).
2. PDF: a one-page letter-size document (text, vector shapes) as a 256 px thumbnail:
   `resize-image {width: 256, format: png}` against `pdftoppm -png -singlefile
   -scale-to 256`.
3. The same thumbnail as a web page gets it: a render URL (`w:256,f:png`) of an
   uploaded PDF, one GET, against the same `pdftoppm` run.
Medians of N runs (default 5), each edit of a source of its own bytes (never answered
from the result cache); each row prints ours, theirs and the ratio. Ours is the whole
edit (fetch, queue, child processes, draw, encode, store), theirs one process.
"""

import argparse
import http.client
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf import Service, release_binary, serve_directory  # noqa: E402
from render import cli, render_path, upload  # noqa: E402

LOGO = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 240 120" width="240" height="120">
  <defs><linearGradient id="g" x1="0" x2="1"><stop offset="0" stop-color="#0a6"/><stop offset="1" stop-color="#06c"/></linearGradient></defs>
  <rect x="4" y="4" width="232" height="112" rx="18" fill="url(#g)" stroke="#024" stroke-width="3"/>
  <path d="M30 90 C60 10, 90 10, 120 90 S180 170, 210 30" fill="none" stroke="#fff" stroke-width="6" opacity="0.7"/>
  <circle cx="60" cy="60" r="22" fill="#fc3"/>
  <text x="100" y="72" font-family="sans-serif" font-size="30" fill="#fff">mediaedit</text>
</svg>
"""


def pdf_page():
    """A letter page with text in a standard font and some vector shapes, by hand."""
    content = "BT /F1 24 Tf 72 700 Td (A page of a document) Tj ET\n"
    content += "".join(f"0.{i} 0.3 0.6 rg {72 + i * 40} 400 30 200 re f\n" for i in range(10))
    content += "0 0 0 RG 4 w 72 100 m 540 300 l S\n"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        "/Resources << /Font << /F1 5 0 R >> >> >>",
        f"<< /Length {len(content)} >>\nstream\n{content}\nendstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out, offsets = "%PDF-1.4\n", []
    for i, body in enumerate(objects):
        offsets.append(len(out))
        out += f"{i + 1} 0 obj\n{body}\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n"
    out += "".join(f"{o:010} 00000 n \n" for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"
    return out.encode()


def timed(command):
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def render_seconds(service, token, sources, runs):
    """Seconds of one GET of a render URL each: a 256 px PNG of an uploaded PDF of its
    own bytes (nothing answered from a cache), after one to warm up."""
    key = cli(service.binary, service.data, "render-key", "create", "--org", "bench-0")
    with open(os.path.join(sources, "doc.pdf"), "rb") as f:
        data = f.read()
    seconds = []
    for run in range(-1, runs):
        path = os.path.join(sources, f"render-{run}.pdf")
        with open(path, "wb") as f:
            f.write(data + f"% render {run}\n".encode())
        url = render_path(key, "w:256,f:png", f"upload:{upload(service.port, token, path)}")
        conn = http.client.HTTPConnection("127.0.0.1", service.port)
        started = time.perf_counter()
        conn.request("GET", url)
        answer = conn.getresponse()
        body = answer.read()
        took = time.perf_counter() - started
        conn.close()
        assert answer.status == 200 and body[:4] == b"\x89PNG", (answer.status, body[:200])
        if run >= 0:
            seconds.append(took)
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    binary = release_binary(args.bin)
    with tempfile.TemporaryDirectory() as work:
        sources = os.path.join(work, "sources")
        os.makedirs(sources)
        with open(os.path.join(sources, "logo.svg"), "w") as f:
            f.write(LOGO)
        with open(os.path.join(sources, "doc.pdf"), "wb") as f:
            f.write(pdf_page())
        base = serve_directory(sources)
        service = Service(binary, work, orgs=1)
        token = service.fresh_token()
        try:
            rows = [
                ("SVG logo to 2048 px PNG", "logo.svg", {"width": 2048, "format": "png"},
                 ["resvg", "-w", "2048", os.path.join(sources, "logo.svg"), os.path.join(work, "r.png")]
                 if shutil.which("resvg") else None),
                ("PDF page to a 256 px thumbnail", "doc.pdf", {"width": 256, "format": "png"},
                 ["pdftoppm", "-png", "-singlefile", "-scale-to", "256", os.path.join(sources, "doc.pdf"),
                  os.path.join(work, "p")]),
            ]
            for name, file, options, reference in rows:
                def body(run):
                    # Bytes of its own per run (a comment at the end): the same content
                    # would be answered from the result cache.
                    with open(os.path.join(sources, file), "rb") as f:
                        data = f.read()
                    mark = f"<!-- {run} -->" if file.endswith(".svg") else f"% {run}\n"
                    with open(os.path.join(sources, f"{run}-{file}"), "wb") as f:
                        f.write(data + mark.encode())
                    return {"assets": [{"type": "image", "src": f"{base}/{run}-{file}"}],
                            "commands": ["resize-image"], "options": options}
                service.edit(token, body(-1))  # warm-up
                ours = statistics.median(service.edit(token, body(run))[0] for run in range(args.runs))
                if reference is None:
                    print(f"{name}: ours {ours * 1000:.0f} ms (resvg CLI not on PATH)")
                    continue
                theirs = statistics.median(timed(reference) for _ in range(args.runs))
                print(f"{name}: ours {ours * 1000:.0f} ms, {reference[0]} {theirs * 1000:.0f} ms, "
                      f"ratio {ours / theirs:.2f}")
            pdftoppm = rows[1][3]
            theirs = statistics.median(timed(pdftoppm) for _ in range(args.runs))
            ours = statistics.median(render_seconds(service, token, sources, args.runs))
            print(f"PDF page to a 256 px thumbnail by render URL: ours {ours * 1000:.0f} ms, "
                  f"pdftoppm {theirs * 1000:.0f} ms, ratio {ours / theirs:.2f}")
        finally:
            service.stop()


if __name__ == "__main__":
    main()
