// What the page shows of a diarization: the timeline (one row per speaker; final segments solid, a speaker's open
// segment light, up to the audio processed), its legend and the segments table, enrolled speakers by their names.

import { drawTimeline, segmentRow } from "./timeline.js";

const $ = (id) => document.getElementById(id);

export class Results {
  constructor() {
    this.segments = []; // {speaker, name?, start, end}, in the order they became final
    this.open = new Map(); // speaker → start of the segment it is in
    this.names = new Map(); // speaker → name, for the enrolled speakers
    this.processed = 0; // seconds of audio the diarizer has been given
    $("segments").replaceChildren();
    this.draw();
  }

  // Live events, as `diarize --stream` prints them: `start` opens a speaker's segment, `end` makes it final.
  take(events) {
    for (const { event, speaker, name, time, start, end } of events) {
      if (event === "start") {
        this.open.set(speaker, time);
        if (name !== undefined) this.names.set(speaker, name);
      } else if (event === "end") {
        this.open.delete(speaker);
        this.add([{ speaker, name, start, end }]);
      }
    }
    this.draw();
  }

  // Final segments: table rows and timeline bars.
  add(segments) {
    for (const { speaker, name } of segments) if (name !== undefined) this.names.set(speaker, name);
    this.segments.push(...segments);
    $("segments").append(...segments.map(segmentRow));
    this.draw();
  }

  draw() {
    drawTimeline($("timeline"), $("legend"), this);
  }
}
