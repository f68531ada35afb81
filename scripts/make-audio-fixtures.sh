#!/usr/bin/env bash
# Regenerates testdata/audio/: one short signal (0.5 s, 16 kHz, mono, 16-bit: two tones and a chirp) in every
# container and codec the audio reader takes, for crates/nemotron-engine/tests/audio_formats.rs. Needs sox and
# ffmpeg (`apt-get install -y sox ffmpeg`); CI does not run this, the files are committed.
set -euo pipefail
cd "$(dirname "$0")/../testdata/audio"
rm -f ./*.wav ./*.flac ./*.mp3 ./*.ogg ./*.opus ./*.aac ./*.m4a

sox -n -r 16000 -b 16 -c 1 source.wav synth 0.5 sine 300 sine 1200 synth 0.5 sine mix 200-3000 vol 0.4
# Stereo: left is the signal, right the signal inverted and halved (the mix is then half the signal).
sox source.wav -c 1 right.wav vol -0.5
sox -M source.wav right.wav stereo.wav && rm right.wav

f() { ffmpeg -nostdin -loglevel error -y -i source.wav "$@"; }
f -c:a pcm_u8 pcm-u8.wav
f -c:a pcm_s24le pcm-s24-extensible.wav         # over 16 bits: ffmpeg writes WAVE_FORMAT_EXTENSIBLE
f -t 0.25 -c:a pcm_f64le float64.wav      # a quarter second: 8 bytes a sample
f -c:a pcm_s16le -rf64 always rf64.wav
f -c:a pcm_mulaw mulaw.wav
f -c:a pcm_alaw alaw.wav
f -ar 8000 -c:a pcm_mulaw mulaw-8khz.wav
f -c:a adpcm_ima_wav ima-adpcm.wav
f -c:a adpcm_ms ms-adpcm.wav
f -c:a flac signal.flac
f -c:a libmp3lame -b:a 64k signal.mp3
f -c:a libvorbis -q:a 6 signal.ogg
f -c:a aac -b:a 64k signal.aac
f -c:a aac -b:a 64k signal.m4a
f -c:a libopus -b:a 32k signal.opus
ls -l
