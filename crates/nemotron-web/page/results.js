// What the page shows of a diarization: the timeline (one row per speaker; final segments solid, a speaker's open
// segment light, up to the audio processed), its legend and the segments table, enrolled speakers by their names.

import { drawTimeline, segmentRow } from "./timeline.js";

const $ = (id) => document.getElementById(id);

// Rows added to the table in one task. More segments at once (a long recording's: thousands) are added in tasks of
// this many after the one that drew them, so that none holds the page for long.
const ROWS_PER_TASK = 250;
// More segments than this at once (a recording's) go into the table closed: the rows of an open table are laid out
// as they come, which for thousands of rows holds the page; opening it lays them out once, when asked.
const ROWS_SHOWN_OPEN = 500;

export class Results {
  constructor() {
    this.segments = []; // {speaker, name?, start, end}, in the order they became final
    this.open = new Map(); // speaker → start of the segment it is in
    this.names = new Map(); // speaker → name, for the enrolled speakers
    this.processed = 0; // seconds of audio the diarizer has been given
    // A table body of its own: rows still to come for the results before go to theirs, no longer shown.
    this.rows = document.createElement("tbody");
    this.rows.id = "segments";
    $("segments").replaceWith(this.rows);
    $("segments-view").open = true;
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

  // Final segments: timeline bars and table rows; resolves once every row is in the table.
  async add(segments) {
    for (const { speaker, name } of segments) if (name !== undefined) this.names.set(speaker, name);
    this.segments.push(...segments);
    this.draw();
    if (segments.length > ROWS_SHOWN_OPEN) $("segments-view").open = false;
    const tasks = segments.length > ROWS_PER_TASK;
    for (let at = 0; at < segments.length; at += ROWS_PER_TASK) {
      if (tasks) await new Promise((next) => setTimeout(next));
      this.rows.append(...segments.slice(at, at + ROWS_PER_TASK).map(segmentRow));
    }
  }

  draw() {
    drawTimeline($("timeline"), $("legend"), this);
    const count = this.segments.length;
    $("segments-count").textContent = count === 1 ? "1 segment" : `${count || "no"} segments`;
  }
}
