// What the page shows of a diarization: the timeline (one row per speaker; final segments solid, a speaker's open
// segment light, up to the audio processed), its legend and the segments table.

import { COLORS, drawTimeline } from "./timeline.js";

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
    drawTimeline($("timeline"), $("legend"), this);
  }
}
