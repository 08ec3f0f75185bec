#!/usr/bin/env bash
# Installs the system packages mediaedit needs when they are missing (Debian/Ubuntu):
# ffmpeg/ffprobe for video; cmake and nasm to build the vendored libjpeg-turbo 3 (SIMD).
set -euo pipefail

missing=()
command -v ffmpeg >/dev/null 2>&1 || missing+=(ffmpeg)
command -v ffprobe >/dev/null 2>&1 || missing+=(ffmpeg)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v nasm >/dev/null 2>&1 || missing+=(nasm)
command -v cc >/dev/null 2>&1 || missing+=(build-essential)

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "Installing missing packages: ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
