//! Bytes → `speakers::SpeakerProfile::from_bytes`: the safetensors header, the profile's metadata, its tensors; what
//! is accepted keeps the format's rules and comes back from its own bytes unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nemotron_engine::io::speakers::{MAX_NAME_CHARS, MIN_CLIP_SAMPLES, SpeakerProfile};

fuzz_target!(|data: &[u8]| {
    let Ok(profile) = SpeakerProfile::from_bytes(data, "fuzz.safetensors") else { return };
    assert!(profile.len() >= 1);
    for (name, samples) in profile.clips() {
        assert!((1..=MAX_NAME_CHARS).contains(&name.chars().count()) && !name.contains(char::is_whitespace));
        assert!(samples.len() >= MIN_CLIP_SAMPLES && samples.iter().all(|x| x.is_finite()));
    }
    let bytes = profile.to_bytes().expect("an accepted profile encodes");
    let back = SpeakerProfile::from_bytes(&bytes, "fuzz.safetensors").expect("a written profile reads back");
    let bits = |p: &SpeakerProfile| -> Vec<(String, Vec<u32>)> {
        p.clips().iter().map(|(n, s)| (n.clone(), s.iter().map(|x| x.to_bits()).collect())).collect()
    };
    assert_eq!(bits(&back), bits(&profile));
});
