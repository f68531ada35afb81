//! `align_with_diarization`: the speakers of a diarization of the same recording replace the model's own diarizer's
//! (its own diarization gives `align`'s result; another diarizer's makes the result's diarization), and a
//! diarization of another recording is refused, naming the argument.

use std::ops::ControlFlow;
use std::path::PathBuf;

use nemotron_engine::{
    AlignRequest, AudioOptions, Engine, EngineOptions, ErrorKind, Input, ModelSource, SegmentSettings, SpeakerProfile,
};

fn reference(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/reference").join(path)
}

fn load(source: ModelSource) -> Engine {
    Engine::load(&source, &EngineOptions::default(), &mut |_, _, _| {}).unwrap()
}

#[test]
fn another_diarizers_speakers_replace_the_models_own() {
    let demo = load(ModelSource::Demo);
    let diarizer = load(ModelSource::Folder(reference("diar-tiny")));
    let input = Input::read_path(&reference("tiny-chunks/audio.wav"), &AudioOptions::default()).unwrap();
    let request =
        AlignRequest { transcript: "<spk:0> the quick brown fox <spk:1> she sells sea shells".into(), language: None };
    let quiet = &mut |_: &str, _: usize, _: usize| ControlFlow::Continue(());

    let own = demo.align(input.clone(), &request, quiet).unwrap();
    let own_diarization = demo.diarize(input.clone(), quiet).unwrap();
    let same = demo.align_with_diarization(input.clone(), &request, &own_diarization, quiet).unwrap();
    assert_eq!(same.to_json().unwrap(), own.to_json().unwrap());

    let other = diarizer.diarize(input.clone(), quiet).unwrap();
    let replaced = demo.align_with_diarization(input.clone(), &request, &other, quiet).unwrap();
    let segments = |a: &nemotron_engine::Aligned| -> Vec<(usize, f64, f64)> {
        a.alignment().diarization.iter().map(|s| (s.speaker, s.timestamp.0, s.timestamp.1)).collect()
    };
    assert_ne!(segments(&replaced), segments(&own), "the other diarizer's speakers were not used");
    // The result's diarization is the other diarizer's, by the same 0.5 threshold on its 10 ms logits.
    let mut expected: Vec<(usize, f64, f64)> =
        other.segments(&SegmentSettings::default()).unwrap().iter().map(|s| (s.speaker, s.start, s.end)).collect();
    let mut got = segments(&replaced);
    let key = |a: &(usize, f64, f64), b: &(usize, f64, f64)| (a.1, a.2, a.0).partial_cmp(&(b.1, b.2, b.0)).unwrap();
    expected.sort_by(key);
    got.sort_by(key);
    assert_eq!(got.len(), expected.len());
    for (g, e) in got.iter().zip(&expected) {
        assert!(g.0 == e.0 && (g.1 - e.1).abs() < 1e-9 && (g.2 - e.2).abs() < 1e-9, "{g:?} != {e:?}");
    }

    let shorter = Input::Samples(match &input {
        Input::Samples(samples) => samples[..samples.len() / 2].to_vec(),
        Input::Features(_) => unreachable!("an audio file gives samples"),
    });
    let half = diarizer.diarize(shorter, quiet).unwrap();
    let error =
        demo.align_with_diarization(input, &request, &half, quiet).err().expect("a diarization of another length");
    assert_eq!(error.kind(), ErrorKind::Usage);
    assert!(error.to_string().starts_with("diarization: "), "{error}");
}

#[test]
fn enrolled_speakers_name_the_tags_their_slots_matched() {
    let demo = load(ModelSource::Demo);
    let samples = match Input::read_path(&reference("tiny-chunks/audio.wav"), &AudioOptions::default()).unwrap() {
        Input::Samples(samples) => samples,
        Input::Features(_) => unreachable!("an audio file gives samples"),
    };
    let profile = SpeakerProfile::new(vec![("alice".to_string(), samples[..24_000].to_vec())]).unwrap();
    let request =
        AlignRequest { transcript: "<spk:0> the quick brown fox <spk:1> she sells sea shells".into(), language: None };
    let quiet = &mut |_: &str, _: usize, _: usize| ControlFlow::Continue(());
    let input = Input::Samples(samples);
    let named = demo.align_with_speakers(input.clone(), &request, &profile, quiet).unwrap();
    let diarized = demo.diarize_with_speakers(input.clone(), &profile, quiet).unwrap();
    let plain = demo.align_with_diarization(input, &request, &diarized, quiet).unwrap();
    assert_eq!(named.alignment(), plain.alignment(), "the speakers are the diarization with speakers'");
    assert_eq!(named.names(), diarized.names());
    let slot = diarized.names().iter().position(Option::is_some).expect("alice has a slot");
    let tags: Vec<String> = named
        .alignment()
        .speaker_tag_to_diarization_speaker
        .iter()
        .filter(|(_, s)| *s == Some(slot))
        .map(|(tag, _)| tag.map_or_else(|| "null".to_string(), |t| t.to_string()))
        .collect();
    let json: serde_json::Value = serde_json::from_str(&named.to_json().unwrap()).unwrap();
    let expected: serde_json::Map<String, serde_json::Value> =
        tags.iter().map(|tag| (tag.clone(), serde_json::Value::from("alice"))).collect();
    assert_eq!(json["speaker_names"], serde_json::Value::Object(expected), "{json}");
    // A named diarization handed to `align_with_diarization` names the same way; `speaker_names` comes last.
    let text = named.to_json().unwrap();
    assert_eq!(text, plain.to_json().unwrap());
    let at = |key: &str| text.find(&format!("\"{key}\"")).unwrap_or_else(|| panic!("{key} in {text}"));
    assert!(at("failed_speakers") < at("speaker_names"), "{text}");
    // Which tags the demo's random diarizer matches to alice's slot is its own affair (none, here); the labels of
    // matched tags are held in nemotron-postprocess's subtitle tests.
    assert_eq!(named.to_srt().contains("[alice] "), !tags.is_empty(), "{}", named.to_srt());
}
