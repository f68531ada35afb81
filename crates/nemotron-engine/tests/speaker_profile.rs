//! Known speakers' profiles: the file is the contract's (safetensors, one 1-D F32 tensor per speaker, the three
//! metadata keys), profiles round-trip bit for bit through bytes and files, and every rule of the format is refused
//! with an error naming the file, the speaker and the limit.

use std::collections::HashMap;
use std::path::Path;

use nemotron_engine::io::speakers::{
    FORMAT, MAX_NAME_CHARS, MIN_CLIP_SAMPLES, ProfileError, SpeakerError, SpeakerProfile, VERSION,
};
use proptest::prelude::*;
use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};

/// `len` samples in [-1, 1) from `seed` (xorshift).
fn clip(seed: u32, len: usize) -> Vec<f32> {
    let mut state = seed | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state as f32 / u32::MAX as f32 * 2.0 - 1.0
        })
        .collect()
}

/// Three speakers whose enrollment order is not their names' order, one name not ASCII.
fn three() -> Vec<(String, Vec<f32>)> {
    vec![
        ("zoe".to_owned(), clip(1, MIN_CLIP_SAMPLES)),
        ("Ærø-3".to_owned(), clip(2, MIN_CLIP_SAMPLES + 1)),
        ("alice".to_owned(), clip(3, 2 * MIN_CLIP_SAMPLES)),
    ]
}

fn bits(clips: &[(String, Vec<f32>)]) -> Vec<(String, Vec<u32>)> {
    clips.iter().map(|(name, samples)| (name.clone(), samples.iter().map(|x| x.to_bits()).collect())).collect()
}

fn metadata(format: &str, version: &str, names: &str) -> HashMap<String, String> {
    HashMap::from([
        ("format".to_owned(), format.to_owned()),
        ("version".to_owned(), version.to_owned()),
        ("names".to_owned(), names.to_owned()),
    ])
}

/// A safetensors file of `tensors` (name, dtype, shape, bytes) and `metadata`, written by the safetensors crate
/// without the profile's checks.
fn safetensors_file(
    tensors: &[(&str, Dtype, Vec<usize>, Vec<u8>)],
    metadata: Option<HashMap<String, String>>,
) -> Vec<u8> {
    let views = tensors.iter().map(|(name, dtype, shape, bytes)| {
        (*name, TensorView::new(*dtype, shape.clone(), bytes).expect("tensor view"))
    });
    safetensors::serialize(views, metadata).expect("serialize")
}

fn f32_bytes(samples: &[f32]) -> Vec<u8> {
    samples.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A file of 1-D F32 tensors named `names` (one clip each) and the profile's metadata listing `listed`.
fn profile_file(names: &[&str], listed: &[&str]) -> Vec<u8> {
    let tensors: Vec<_> = names
        .iter()
        .enumerate()
        .map(|(i, name)| (*name, Dtype::F32, vec![MIN_CLIP_SAMPLES], f32_bytes(&clip(i as u32, MIN_CLIP_SAMPLES))))
        .collect();
    safetensors_file(&tensors, Some(metadata(FORMAT, VERSION, &serde_json::to_string(listed).unwrap())))
}

fn read(bytes: &[u8]) -> Result<SpeakerProfile, ProfileError> {
    SpeakerProfile::from_bytes(bytes, "voices.safetensors")
}

#[test]
fn profiles_round_trip_through_bytes_in_enrollment_order() {
    let profile = SpeakerProfile::new(three()).unwrap();
    assert_eq!(profile.len(), 3);
    assert_eq!(profile.names().collect::<Vec<_>>(), ["zoe", "Ærø-3", "alice"]);
    let bytes = profile.to_bytes().unwrap();
    let back = read(&bytes).unwrap();
    assert_eq!(bits(back.clips()), bits(&three()));
    assert_eq!(bits(&back.into_clips()), bits(&three()));
}

#[test]
fn profiles_round_trip_through_files_written_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("voices.safetensors");
    std::fs::write(&path, b"an older file").unwrap();
    let profile = SpeakerProfile::new(three()).unwrap();
    profile.write(&path).unwrap();
    assert_eq!(bits(SpeakerProfile::read(&path).unwrap().clips()), bits(&three()));
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, ["voices.safetensors"], "a temporary file was left behind");
}

#[test]
fn the_file_is_the_contracts_safetensors() {
    let bytes = SpeakerProfile::new(three()).unwrap().to_bytes().unwrap();
    let (_, header) = SafeTensors::read_metadata(&bytes).unwrap();
    let expected = metadata("nemotron-speakers", "1", r#"["zoe","Ærø-3","alice"]"#);
    assert_eq!(header.metadata().as_ref(), Some(&expected));
    let file = SafeTensors::deserialize(&bytes).unwrap();
    assert_eq!(file.len(), 3);
    for (name, samples) in three() {
        let view = file.tensor(&name).unwrap();
        assert_eq!((view.dtype(), view.shape()), (Dtype::F32, &[samples.len()][..]), "{name}");
        assert_eq!(view.data(), f32_bytes(&samples), "{name}'s samples, little-endian f32");
    }
}

/// safetensors writes the metadata's keys in a hash map's order, which differs from one write to the next: a
/// profile's header is written again sorted, so twenty writes (each its own map) give one file, whose header is
/// safetensors' own with the keys sorted (the tensors in their data's order, which is their names').
#[test]
fn a_profile_always_gives_the_same_bytes() {
    let first = SpeakerProfile::new(three()).unwrap().to_bytes().unwrap();
    for write in 1..20 {
        assert!(SpeakerProfile::new(three()).unwrap().to_bytes().unwrap() == first, "write {write} differs");
    }
    let (length, _) = SafeTensors::read_metadata(&first).unwrap();
    assert_eq!(length % 8, 0, "safetensors pads its header to 8 bytes");
    let header = std::str::from_utf8(&first[8..8 + length]).unwrap().trim_end_matches(' ');
    let offsets = |from: usize, len: usize| format!("[{},{}]", 4 * from, 4 * (from + len));
    let (alice, zoe, aero) = (2 * MIN_CLIP_SAMPLES, MIN_CLIP_SAMPLES, MIN_CLIP_SAMPLES + 1);
    let metadata =
        r#"{"__metadata__":{"format":"nemotron-speakers","names":"[\"zoe\",\"Ærø-3\",\"alice\"]","version":"1"},"#;
    let tensors = format!(
        r#""alice":{{"dtype":"F32","shape":[{alice}],"data_offsets":{}}},"zoe":{{"dtype":"F32","shape":[{zoe}],"data_offsets":{}}},"Ærø-3":{{"dtype":"F32","shape":[{aero}],"data_offsets":{}}}}}"#,
        offsets(0, alice),
        offsets(alice, zoe),
        offsets(alice + zoe, aero),
    );
    assert_eq!(header, metadata.to_owned() + &tensors);
}

#[test]
fn clips_under_one_second_are_refused() {
    let mut clips = three();
    clips[1].1.truncate(MIN_CLIP_SAMPLES - 1);
    let error = SpeakerProfile::new(clips.clone()).unwrap_err();
    assert_eq!(error, SpeakerError::ClipTooShort { name: "Ærø-3".into(), samples: MIN_CLIP_SAMPLES - 1 });
    let message = error.to_string();
    assert!(message.contains("Ærø-3") && message.contains("at least 1 s (16000 samples"), "{message}");
    clips[1].1.push(0.0);
    SpeakerProfile::new(clips).expect("exactly 1 s");
}

#[test]
fn names_break_the_rules_each_with_its_error() {
    let with_name = |name: &str| {
        let mut clips = three();
        clips[2].0 = name.to_owned();
        SpeakerProfile::new(clips)
    };
    assert_eq!(with_name("").unwrap_err(), SpeakerError::EmptyName);
    let long = "x".repeat(MAX_NAME_CHARS + 1);
    assert_eq!(with_name(&long).unwrap_err(), SpeakerError::NameTooLong { name: long, chars: 65 });
    // Characters, not bytes: 64 two-byte characters are a valid name.
    with_name(&"é".repeat(MAX_NAME_CHARS)).expect("64 characters");
    for spaced in ["Mary Ann", "tab\there", "line\n", "no\u{a0}break", "\u{3000}ideographic"] {
        assert_eq!(with_name(spaced).unwrap_err(), SpeakerError::NameWhitespace { name: spaced.into() });
    }
    assert_eq!(with_name("zoe").unwrap_err(), SpeakerError::DuplicateName { name: "zoe".into() });
    assert_eq!(with_name("__metadata__").unwrap_err(), SpeakerError::ReservedName);
    assert_eq!(SpeakerProfile::new(Vec::new()).unwrap_err(), SpeakerError::NoSpeakers);
    let message = with_name("Mary Ann").unwrap_err().to_string();
    assert!(message.contains("\"Mary Ann\"") && message.contains("1–64 characters without whitespace"), "{message}");
}

#[test]
fn non_finite_samples_are_refused_where_they_are() {
    for value in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let mut clips = three();
        clips[0].1[12_345] = value;
        let error = SpeakerProfile::new(clips).unwrap_err();
        assert!(
            matches!(&error, SpeakerError::NotFinite { name, index: 12_345, value: v }
                if name == "zoe" && v.to_bits() == value.to_bits()),
            "{error}"
        );
    }
}

#[test]
fn files_breaking_the_speaker_rules_are_refused_naming_the_file() {
    let short = safetensors_file(
        &[("bob", Dtype::F32, vec![8_000], f32_bytes(&clip(4, 8_000)))],
        Some(metadata(FORMAT, VERSION, r#"["bob"]"#)),
    );
    let error = read(&short).unwrap_err();
    assert!(
        matches!(&error, ProfileError::Speaker { source: SpeakerError::ClipTooShort { samples: 8_000, .. }, .. }),
        "{error}"
    );
    assert!(error.to_string().starts_with("voices.safetensors: speaker `bob`: the clip is 0.500 s"), "{error}");
    let mut samples = clip(5, MIN_CLIP_SAMPLES);
    samples[7] = f32::NAN;
    let nan = safetensors_file(
        &[("bob", Dtype::F32, vec![MIN_CLIP_SAMPLES], f32_bytes(&samples))],
        Some(metadata(FORMAT, VERSION, r#"["bob"]"#)),
    );
    let error = read(&nan).unwrap_err();
    assert!(
        matches!(&error, ProfileError::Speaker { source: SpeakerError::NotFinite { index: 7, .. }, .. }),
        "{error}"
    );
    let spaced = profile_file(&["a b"], &["a b"]);
    let error = read(&spaced).unwrap_err();
    assert!(matches!(&error, ProfileError::Speaker { source: SpeakerError::NameWhitespace { .. }, .. }), "{error}");
    let empty = safetensors_file(&[], Some(metadata(FORMAT, VERSION, "[]")));
    assert!(matches!(read(&empty).unwrap_err(), ProfileError::Speaker { source: SpeakerError::NoSpeakers, .. }));
}

#[test]
fn foreign_safetensors_files_are_not_profiles() {
    let tensors = [("bob", Dtype::F32, vec![MIN_CLIP_SAMPLES], f32_bytes(&clip(6, MIN_CLIP_SAMPLES)))];
    let untagged = safetensors_file(&tensors, None);
    let error = read(&untagged).unwrap_err();
    assert!(matches!(&error, ProfileError::NotAProfile { format: None, .. }), "{error}");
    assert!(error.to_string().starts_with("voices.safetensors: not a speaker profile"), "{error}");
    let error = read(&safetensors_file(&tensors, Some(metadata("pt", VERSION, r#"["bob"]"#)))).unwrap_err();
    assert!(matches!(&error, ProfileError::NotAProfile { format: Some(f), .. } if f == "pt"), "{error}");
}

#[test]
fn other_versions_are_refused_by_name() {
    let tensors = [("bob", Dtype::F32, vec![MIN_CLIP_SAMPLES], f32_bytes(&clip(7, MIN_CLIP_SAMPLES)))];
    let error = read(&safetensors_file(&tensors, Some(metadata(FORMAT, "2", r#"["bob"]"#)))).unwrap_err();
    assert!(matches!(&error, ProfileError::Version { version: Some(v), .. } if v == "2"), "{error}");
    assert_eq!(
        error.to_string(),
        "voices.safetensors: speaker profile version \"2\" is not supported: this build reads version 1"
    );
    let mut unversioned = metadata(FORMAT, VERSION, r#"["bob"]"#);
    unversioned.remove("version");
    let error = read(&safetensors_file(&tensors, Some(unversioned))).unwrap_err();
    assert!(matches!(&error, ProfileError::Version { version: None, .. }), "{error}");
}

#[test]
fn damaged_and_truncated_files_are_corrupt() {
    let bytes = SpeakerProfile::new(three()).unwrap().to_bytes().unwrap();
    let header = 8 + usize::try_from(u64::from_le_bytes(bytes[..8].try_into().unwrap())).unwrap();
    // Every cut inside the header and the first samples, then every 997th byte of the data.
    for cut in (0..header + 64).chain((header + 64..bytes.len()).step_by(997)) {
        let error = read(&bytes[..cut]).unwrap_err();
        assert!(matches!(error, ProfileError::Corrupt { .. }), "cut at {cut}: {error}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(read(&longer).unwrap_err(), ProfileError::Corrupt { .. }));
    let mut broken = bytes;
    broken[9] = b'#';
    let error = read(&broken).unwrap_err();
    assert!(matches!(error, ProfileError::Corrupt { .. }), "{error}");
    let error = read(b"RIFF\x24\0\0\0WAVEfmt ").unwrap_err();
    assert!(error.to_string().starts_with("voices.safetensors: not a speaker profile"), "{error}");
}

#[test]
fn the_names_list_must_be_the_tensors() {
    let problem = |bytes: &[u8]| match read(bytes) {
        Err(ProfileError::Names { problem, .. }) => problem,
        other => panic!("not a names error: {other:?}"),
    };
    assert!(problem(&profile_file(&["a", "b"], &["a"])).contains("tensor `b` is not in"));
    assert!(problem(&profile_file(&["a"], &["a", "b"])).contains("lists `b`, which has no tensor"));
    assert!(problem(&profile_file(&["a", "b"], &["a", "b", "a"])).contains("lists `a` twice"));
    let tensors = [("a", Dtype::F32, vec![MIN_CLIP_SAMPLES], f32_bytes(&clip(8, MIN_CLIP_SAMPLES)))];
    for list in ["a", "[\"a\"", "{\"a\": 1}", "[1]", "\"a\""] {
        let text = problem(&safetensors_file(&tensors, Some(metadata(FORMAT, VERSION, list))));
        assert!(text.contains("not a JSON list of strings"), "{list}: {text}");
    }
    let mut unnamed = metadata(FORMAT, VERSION, "");
    unnamed.remove("names");
    assert!(problem(&safetensors_file(&tensors, Some(unnamed))).contains("no `names` list"));
    // The list gives the order, whatever order the tensors have in the file.
    let reversed = read(&profile_file(&["a", "b", "c"], &["c", "a", "b"])).unwrap();
    assert_eq!(reversed.names().collect::<Vec<_>>(), ["c", "a", "b"]);
}

#[test]
fn tensors_other_than_1d_f32_are_refused() {
    let cases = [
        (Dtype::F64, vec![MIN_CLIP_SAMPLES], 8 * MIN_CLIP_SAMPLES),
        (Dtype::F16, vec![2 * MIN_CLIP_SAMPLES], 4 * MIN_CLIP_SAMPLES),
        (Dtype::F32, vec![2, MIN_CLIP_SAMPLES], 8 * MIN_CLIP_SAMPLES),
        (Dtype::F32, vec![], 4),
    ];
    for (dtype, shape, len) in cases {
        let file = safetensors_file(
            &[("bob", dtype, shape.clone(), vec![0; len])],
            Some(metadata(FORMAT, VERSION, r#"["bob"]"#)),
        );
        let error = read(&file).unwrap_err();
        assert!(
            matches!(&error, ProfileError::Tensor { name, dtype: d, shape: s, .. }
                if name == "bob" && *d == dtype.to_string() && *s == shape),
            "{error}"
        );
        assert!(error.to_string().contains("a profile holds 1-D F32 tensors"), "{error}");
    }
}

#[test]
fn file_errors_name_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.safetensors");
    let error = SpeakerProfile::read(&missing).unwrap_err();
    assert!(matches!(&error, ProfileError::Read { path, .. } if Path::new(path) == missing), "{error}");
    let foreign = dir.path().join("model.safetensors");
    std::fs::write(&foreign, safetensors_file(&[], None)).unwrap();
    let error = SpeakerProfile::read(&foreign).unwrap_err();
    assert!(error.to_string().starts_with(&format!("{}: not a speaker profile", foreign.display())), "{error}");
    let nowhere = dir.path().join("no/such/folder/voices.safetensors");
    let error = SpeakerProfile::new(three()).unwrap().write(&nowhere).unwrap_err();
    assert!(matches!(&error, ProfileError::Write { path, .. } if Path::new(path) == nowhere), "{error}");
}

// ---- properties ----

/// A finite f32 from any bits: a NaN's or an infinity's exponent loses its top bit.
fn finite(bits: u32) -> f32 {
    let x = f32::from_bits(bits);
    if x.is_finite() { x } else { f32::from_bits(bits & !(1 << 30)) }
}

/// Up to four speakers: unique names of 1–64 non-whitespace characters, clips of 1–1.1 s of any finite values.
fn valid_clips() -> impl Strategy<Value = Vec<(String, Vec<f32>)>> {
    let speaker = ("\\S{1,64}", 0usize..1_600, any::<u32>(), prop::collection::vec(any::<u32>(), 0..8));
    prop::collection::vec(speaker, 1..5)
        .prop_filter("unique names", |speakers| {
            let mut names: Vec<&str> = speakers.iter().map(|s| s.0.as_str()).collect();
            names.sort_unstable();
            names.windows(2).all(|w| w[0] != w[1]) && !names.contains(&"__metadata__")
        })
        .prop_map(|speakers| {
            speakers
                .into_iter()
                .map(|(name, extra, seed, specials)| {
                    // Random values, then raw bit patterns (subnormals, −0, the extremes) spread over the clip.
                    let mut samples = clip(seed, MIN_CLIP_SAMPLES + extra);
                    let step = samples.len() / (specials.len() + 1);
                    for (i, bits) in specials.into_iter().enumerate() {
                        samples[(i + 1) * step] = finite(bits);
                    }
                    (name, samples)
                })
                .collect()
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Any valid profile comes back from its bytes bit for bit, names and order included.
    #[test]
    fn valid_profiles_round_trip_bit_for_bit(clips in valid_clips()) {
        let profile = SpeakerProfile::new(clips.clone()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let bytes = profile.to_bytes().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let back = read(&bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(bits(back.clips()), bits(&clips));
    }
}

/// What every profile a reader accepts keeps.
fn assert_valid(profile: &SpeakerProfile) -> Result<(), TestCaseError> {
    prop_assert!(profile.len() >= 1);
    for (name, samples) in profile.clips() {
        prop_assert!((1..=MAX_NAME_CHARS).contains(&name.chars().count()) && !name.contains(char::is_whitespace));
        prop_assert!(samples.len() >= MIN_CLIP_SAMPLES && samples.iter().all(|x| x.is_finite()));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Any bytes: a profile that keeps the rules or a typed error, never a panic.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        if let Ok(profile) = read(&bytes) {
            assert_valid(&profile)?;
        }
    }

    /// A real profile damaged in its header or cut short, or with its metadata's values replaced: accepted only as
    /// a profile that keeps the rules, refused otherwise.
    #[test]
    fn damaged_profiles_give_typed_errors(
        edits in prop_oneof![Just(Vec::new()), prop::collection::vec((0usize..200, any::<u8>()), 1..4)],
        truncate in prop::option::weighted(0.2, 0usize..400),
        format in prop::option::weighted(0.9, prop_oneof![3 => Just(FORMAT.to_owned()), 1 => ".{0,20}"]),
        version in prop::option::weighted(0.9, prop_oneof![3 => Just(VERSION.to_owned()), 1 => ".{0,4}"]),
        names in prop::option::weighted(0.9, prop_oneof![
            Just("[\"a\",\"b\"]".to_owned()),
            Just("[\"b\",\"a\"]".to_owned()),
            "\\[(\"[ab ]{0,3}\",?){0,3}\\]",
            ".{0,12}",
        ]),
    ) {
        let mut metadata = HashMap::new();
        for (key, value) in [("format", format), ("version", version), ("names", names)] {
            if let Some(value) = value {
                metadata.insert(key.to_owned(), value);
            }
        }
        let tensors: Vec<_> = ["a", "b"]
            .iter()
            .map(|name| (*name, Dtype::F32, vec![MIN_CLIP_SAMPLES], f32_bytes(&clip(9, MIN_CLIP_SAMPLES))))
            .collect();
        let mut bytes = safetensors_file(&tensors, Some(metadata));
        for (i, b) in edits {
            if let Some(byte) = bytes.get_mut(i) {
                *byte = b;
            }
        }
        if let Some(n) = truncate {
            bytes.truncate(n);
        }
        if let Ok(profile) = read(&bytes) {
            assert_valid(&profile)?;
        }
    }
}
