// What the page shows of a diarization: the timeline (one row per speaker; final segments solid, a speaker's open
// segment light, up to the audio processed), its legend and the segments table.

import { drawTimeline, segmentRow } from "./timeline.js";

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
    this.segments.push(...segments);
    $("segments").append(...segments.map(segmentRow));
    this.draw();
  }

  draw() {
    drawTimeline($("timeline"), $("legend"), this);
  }
}
