// What both pages draw of a diarization (this package's page and the server's, which serves this file too): the
// speaker timeline (one row per speaker, the segments made final solid and those still open light, up to the audio
// processed) with its legend, and a row of the segments table.

const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

// A speaker's label: an enrolled speaker's name, else the diarizer's slot.
const label = (speaker, name) => name ?? `spk${speaker}`;

// `view`: `segments` ({speaker, start, end}, final), `open` (a Map speaker → start of the segment it is in),
// `processed` (seconds of audio the diarizer has been given) and, optionally, `names` (a Map speaker → the enrolled
// speaker's name, for known speakers).
export function drawTimeline(canvas, legend, { segments, open, processed, names = new Map() }) {
  const g = canvas.getContext("2d");
  const speakers = [...new Set([...segments.map((s) => s.speaker), ...open.keys()])].sort((a, b) => a - b);
  const rows = Math.max(1, ...speakers.map((k) => k + 1));
  const labels = Array.from({ length: rows }, (_, k) => label(k, names.get(k)));
  const seconds = Math.max(10, processed, ...segments.map((s) => s.end));
  g.font = "12px sans-serif";
  // Room for the longest label (a name can be longer than `spk0`).
  const left = Math.max(50, ...labels.map((text) => g.measureText(text).width + 10));
  const [width, height] = [canvas.width, canvas.height];
  const rowHeight = (height - 20) / rows;
  const x = (t) => left + ((width - left - 10) * t) / seconds;
  g.clearRect(0, 0, width, height);
  g.fillStyle = "#555";
  labels.forEach((text, k) => g.fillText(text, 4, rowHeight * k + rowHeight / 2 + 4));
  const bar = (speaker, start, stop, alpha) => {
    g.globalAlpha = alpha;
    g.fillStyle = COLORS[speaker % COLORS.length];
    g.fillRect(x(start), rowHeight * speaker + 3, Math.max(1, x(stop) - x(start)), rowHeight - 6);
    g.globalAlpha = 1;
  };
  segments.forEach((s) => bar(s.speaker, s.start, s.end, 1));
  open.forEach((start, speaker) => bar(speaker, start, Math.max(start, processed), 0.4));
  g.fillStyle = "#888";
  g.fillRect(x(processed), 0, 1, height - 20);
  g.fillText(`${processed.toFixed(2)} s`, Math.min(x(processed) + 3, width - 50), height - 5);
  legend.replaceChildren(
    ...speakers.flatMap((k) => {
      const swatch = document.createElement("span");
      swatch.style.background = COLORS[k % COLORS.length];
      return [swatch, labels[k]];
    }),
  );
}

// A segments table row: the speaker (`name`, when given, for an enrolled speaker), start and end in seconds, in the
// speaker's color.
export function segmentRow({ speaker, name, start, end }) {
  const row = document.createElement("tr");
  for (const text of [label(speaker, name), start.toFixed(2), end.toFixed(2)]) {
    const cell = document.createElement("td");
    cell.textContent = text;
    row.append(cell);
  }
  row.style.color = COLORS[speaker % COLORS.length];
  return row;
}
