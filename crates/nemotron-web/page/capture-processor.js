// The microphone's AudioWorklet processor: runs on the audio thread of a 16 kHz AudioContext (the browser resamples
// the microphone to it), mixes the channels to mono (their mean, as the CLI's `--channel mix`) and posts the samples
// to the page in frames of `frame` samples, so a page hands the diarizer a tenth of a second at a time rather than
// every 128-sample render quantum. `flush` posts what is left and answers `flushed`.
class Capture extends AudioWorkletProcessor {
  constructor(options) {
    super();
    this.frame = options.processorOptions.frame;
    this.buffer = new Float32Array(this.frame);
    this.length = 0;
    this.port.onmessage = (message) => {
      if (message.data !== "flush") return;
      this.post();
      this.port.postMessage("flushed");
    };
  }

  post() {
    if (this.length === 0) return;
    this.port.postMessage(this.buffer.slice(0, this.length));
    this.length = 0;
  }

  process(inputs) {
    const channels = inputs[0];
    if (!channels || channels.length === 0) return true;
    const samples = channels[0].length;
    for (let i = 0; i < samples; i++) {
      let sum = 0;
      for (const channel of channels) sum += channel[i];
      this.buffer[this.length++] = sum / channels.length;
      if (this.length === this.frame) this.post();
    }
    return true;
  }
}

registerProcessor("capture", Capture);
