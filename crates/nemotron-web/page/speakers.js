// The known speakers' rows: each a name and a clip of that voice alone, recorded from the microphone (capture.js) or
// decoded from an audio file (decode.js), as 16 kHz mono samples: what `Diarizer.enroll` takes.

import { openMicrophone } from "./capture.js";
import { decodeFile, SAMPLE_RATE } from "./decode.js";

// The samples of the frames a recording gathered, in one array.
function joined(frames) {
  const samples = new Float32Array(frames.reduce((sum, frame) => sum + frame.length, 0));
  let at = 0;
  for (const frame of frames) {
    samples.set(frame, at);
    at += frame.length;
  }
  return samples;
}

export class SpeakerRows {
  // Rows go into `container`, each a copy of `template`'s row; `fail(error)` hears of a clip that could not be had.
  constructor(container, template, fail) {
    Object.assign(this, { container, template, fail });
    this.rows = []; // {element, samples, microphone, frames}, in the page's order
  }

  add() {
    const element = this.template.content.firstElementChild.cloneNode(true);
    const row = { element, samples: null, microphone: null, frames: [] };
    const field = (name) => element.querySelector(`[data-field=${name}]`);
    field("clip").addEventListener("change", async (e) => {
      const file = e.target.files[0];
      if (!file) return;
      try {
        this.setClip(row, await decodeFile(file), file.name);
      } catch (error) {
        this.fail(error);
      }
    });
    field("record").addEventListener("click", () => this.record(row, field("record")));
    field("remove").addEventListener("click", () => {
      row.microphone?.stop();
      element.remove();
      this.rows = this.rows.filter((r) => r !== row);
    });
    this.container.append(element);
    this.rows.push(row);
  }

  setClip(row, samples, source) {
    row.samples = samples;
    row.element.querySelector("[data-field=status]").textContent =
      `${source}: ${(samples.length / SAMPLE_RATE).toFixed(2)} s`;
  }

  // Record starts the microphone, the same button stops it and keeps what it heard as the row's clip.
  async record(row, button) {
    const status = row.element.querySelector("[data-field=status]");
    if (row.microphone) {
      const microphone = row.microphone;
      row.microphone = null;
      button.textContent = "Record";
      await microphone.stop();
      this.setClip(row, joined(row.frames), "recorded");
      return;
    }
    button.disabled = true;
    try {
      row.frames = [];
      row.microphone = await openMicrophone((samples) => row.frames.push(samples));
      button.textContent = "Stop";
      status.textContent = "recording…";
    } catch (error) {
      this.fail(new Error(`microphone: ${error.message}`));
    } finally {
      button.disabled = false;
    }
  }

  // `[{ name, samples }]` of every row, or an Error saying which row is not ready.
  clips() {
    if (this.rows.length === 0) throw new Error("add a speaker, with a name and a clip, to enroll");
    return this.rows.map((row, i) => {
      const name = row.element.querySelector("[data-field=name]").value.trim();
      const which = name || `speaker ${i + 1}`;
      if (row.microphone) throw new Error(`${which} is still recording: stop it first`);
      if (!name) throw new Error(`speaker ${i + 1} has no name`);
      if (!row.samples) throw new Error(`${name} has no clip: record one or choose an audio file`);
      return { name, samples: row.samples };
    });
  }
}
