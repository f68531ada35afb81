// What the page shows of a diarization: the timeline (one row per speaker; final segments solid, a speaker's open
// segment light, up to the audio processed), its legend and the segments table.

const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
const $ = (id) => document.getElementById(id);

export class Results {
  constructor() {
    this.segments = []; // {speaker, start, end}, in the order they became final
    this.open = new Map(); // speaker → start of the segment it is in
    this.processed = 0; // seconds of audio the diarizer has been given
    $("segments").replaceChildren();
    this.draw();
  }

  // Live events, as `diarize --stream` prints them: `start` opens a speaker's segment, `end` makes it final.
  take(events) {
    for (const event of events) {
      if (event.event === "start") {
        this.open.set(event.speaker, event.time);
      } else if (event.event === "end") {
        this.open.delete(event.speaker);
        this.add([{ speaker: event.speaker, start: event.start, end: event.end }]);
      }
    }
    this.draw();
  }

  // Final segments: table rows and timeline bars.
  add(segments) {
    const rows = segments.map(({ speaker, start, end }) => {
      const row = document.createElement("tr");
      for (const text of [`spk${speaker}`, start.toFixed(2), end.toFixed(2)]) {
        const cell = document.createElement("td");
        cell.textContent = text;
        row.append(cell);
      }
      row.style.color = COLORS[speaker % COLORS.length];
      return row;
    });
    this.segments.push(...segments);
    $("segments").append(...rows);
    this.draw();
  }

  draw() {
    const canvas = $("timeline");
    const g = canvas.getContext("2d");
    const speakers = [...new Set([...this.segments.map((s) => s.speaker), ...this.open.keys()])].sort((a, b) => a - b);
    const rows = Math.max(1, ...speakers.map((k) => k + 1));
    const seconds = Math.max(10, this.processed, ...this.segments.map((s) => s.end));
    const [width, height, left] = [canvas.width, canvas.height, 50];
    const rowHeight = (height - 20) / rows;
    const x = (t) => left + ((width - left - 10) * t) / seconds;
    g.clearRect(0, 0, width, height);
    g.font = "12px sans-serif";
    g.fillStyle = "#555";
    for (let k = 0; k < rows; k++) g.fillText(`spk${k}`, 4, rowHeight * k + rowHeight / 2 + 4);
    const bar = (speaker, start, stop, alpha) => {
      g.globalAlpha = alpha;
      g.fillStyle = COLORS[speaker % COLORS.length];
      g.fillRect(x(start), rowHeight * speaker + 3, Math.max(1, x(stop) - x(start)), rowHeight - 6);
      g.globalAlpha = 1;
    };
    this.segments.forEach((s) => bar(s.speaker, s.start, s.end, 1));
    this.open.forEach((start, speaker) => bar(speaker, start, Math.max(start, this.processed), 0.4));
    g.fillStyle = "#888";
    g.fillRect(x(this.processed), 0, 1, height - 20);
    g.fillText(`${this.processed.toFixed(2)} s`, Math.min(x(this.processed) + 3, width - 50), height - 5);
    const legend = speakers.flatMap((k) => {
      const swatch = document.createElement("span");
      swatch.style.background = COLORS[k % COLORS.length];
      return [swatch, `spk${k}`];
    });
    $("legend").replaceChildren(...legend);
  }
}
