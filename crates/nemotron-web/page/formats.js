// The segment files the page offers for download, in the layouts `nemotron-audio diarize` writes (RTTM; JSON as
// upstream's `extract_speaker_dict` returns it). A file's JSON comes from the package itself; these write a live
// session's segments, and the RTTM of either, from segments on the 10 ms grid ({speaker, start, end} in seconds).

// A number as Python's json writes a float (shortest form, `1.0` for a whole number), rounded to 0.01 s.
function pythonFloat(seconds) {
  const text = String(Number(seconds.toFixed(2)));
  return /[.e]/.test(text) ? text : `${text}.0`;
}

// One object per line, as the CLI (and the committed speaker_dict.json files) lay them out.
export function toJson(segments) {
  if (segments.length === 0) return "[]\n";
  const lines = segments.map(
    (s) => `{"Start": ${pythonFloat(s.start)}, "End": ${pythonFloat(s.end)}, "Speaker": ${s.speaker}}`,
  );
  return `[\n${lines.join(",\n")}\n]\n`;
}

// NIST RTTM `SPEAKER` lines; whitespace in the file id becomes `_`, since it would split the field.
export function toRttm(uri, segments) {
  const id = uri.replace(/\s/g, "_");
  return segments
    .map((s) => {
      const [start, duration] = [s.start.toFixed(2), (s.end - s.start).toFixed(2)];
      return `SPEAKER ${id} 1 ${start} ${duration} <NA> <NA> spk${s.speaker} <NA> <NA>\n`;
    })
    .join("");
}

// The segments of the package's JSON text (`{"Start", "End", "Speaker"}` objects).
export function fromJson(text) {
  return JSON.parse(text).map((s) => ({ speaker: s.Speaker, start: s.Start, end: s.End }));
}

// Segments in the order every output of the CLI uses: by start, then speaker.
export function sortSegments(segments) {
  return segments.sort((a, b) => a.start - b.start || a.speaker - b.speaker);
}
