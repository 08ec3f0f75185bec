#!/bin/bash
# The 16-core measurements: scaling, chunked ogg/webm, the HLS ladder.
# Carried as .devbench (see bundle.sh): `bash .devbench/run.sh` on the machine, with
# $OUT the folder whose files come back. About 8 minutes on 16 cores.
set -u
B=/tmp/b
mkdir -p $B && tar xJf .devbench/bundle.tar.xz -C $B || exit 1
# Every binary finds its libraries through its RPATH, /tmp/b/lib.
export PATH=$B/bin:$PATH PYTHONUNBUFFERED=1
{ nproc; head -1 /etc/os-release; ldd --version | head -1; ffmpeg -hide_banner -version | head -1; ffprobe -version | head -1; mediaedit --version; } 2>&1 | tee $OUT/env.txt
ffmpeg -hide_banner -version >/dev/null && ffprobe -hide_banner -version >/dev/null && mediaedit --version >/dev/null || exit 2
ffmpeg -hide_banner -encoders 2>/dev/null | grep -E "libx264|libtheora|libvpx-vp9|libvorbis|libopus|libwebp|aac" | tee -a $OUT/env.txt
cd bench
timeout ${T_SCALING:-230} python3 scaling.py --bin $B/bin/mediaedit --workers 1,2,4,8,16 2>&1 | tee $OUT/scaling.txt
timeout ${T_CHUNKED:-150} python3 chunked.py --bin $B/bin/mediaedit --runs 1 --only 1080p 2>&1 | tee $OUT/chunked.txt
timeout ${T_HLS:-100} python3 hls.py --bin $B/bin/mediaedit --runs 1 2>&1 | tee $OUT/hls.txt
uptime | tee -a $OUT/env.txt
