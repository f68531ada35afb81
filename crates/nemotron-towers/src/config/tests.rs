use super::*;

#[test]
fn empty_transcribe_config_takes_release_defaults() {
    let ModelConfig::Transcribe(c) = ModelConfig::from_json(r#"{"model_type":"nemo_speechlm"}"#).unwrap() else {
        panic!("not a transcribe config")
    };
    assert_eq!((c.asr.hidden, c.asr.heads, c.asr.head_dim, c.asr.layers), (1280, 10, 128, 32));
    assert_eq!((c.asr.rotary_dims, c.asr.intermediate, c.asr.qk_norm), (64, 5120, true));
    let d = &c.diarization;
    assert_eq!((d.encoder.hidden, d.encoder.heads, d.encoder.layers, d.encoder.rotary_dims), (512, 8, 31, 64));
    assert_eq!((d.head_hidden, d.speakers, d.encoder.qk_norm), (192, 8, false));
    assert_eq!(d.chunks, ChunkConfig { length: 500, left_context: 50, right_context: 50 });
    assert_eq!((d.cache.fifo_length, d.cache.update_period, d.cache.cache_length), (40, 300, 188));
    let streaming = &d.streaming_cache;
    assert_eq!((streaming.fifo_length, streaming.update_period, streaming.cache_length), (264, 222, 188));
    assert_eq!(c.text_hidden, 2688);
    let w = &c.word_timestamps;
    assert_eq!((w.encoder.hidden, w.encoder.heads, w.encoder.head_dim, w.encoder.layers), (1280, 16, 80, 2));
    assert_eq!((w.encoder.rotary_dims, w.encoder.intermediate, w.encoder.qk_norm), (40, 640, true));
    assert_eq!((w.upsampling_factor, w.residual_scale, w.vocab_size, w.blank_token_id), (2, 0.1, 23863, 23862));
}

#[test]
fn word_timestamp_config_values_come_from_the_config() {
    let json = r#"{"model_type":"nemo_speechlm","audio_config":{"asr_config":{"hidden_size":64,
        "num_attention_heads":2}},"word_timestamp_config":{"hidden_size":64,"intermediate_size":32,
        "num_attention_heads":4,"num_hidden_layers":3,"vocab_size":64,"blank_token_id":63,"residual_scale":0.25,
        "upsampling_factor":3,"rope_parameters":{"rope_theta":500.0}}}"#;
    let ModelConfig::Transcribe(c) = ModelConfig::from_json(json).unwrap() else { panic!("transcribe") };
    let w = &c.word_timestamps;
    assert_eq!((w.encoder.hidden, w.encoder.heads, w.encoder.head_dim, w.encoder.layers), (64, 4, 16, 3));
    // A given `rope_parameters` without `partial_rotary_factor` rotates every dim, as upstream.
    assert_eq!((w.encoder.rotary_dims, w.encoder.rope_theta), (16, 500.0));
    assert_eq!((w.upsampling_factor, w.residual_scale, w.vocab_size, w.blank_token_id), (3, 0.25, 64, 63));
    for (fields, needle) in [
        (r#""hidden_size":64,"blank_token_id":64,"vocab_size":64"#, "below vocab_size"),
        (r#""hidden_size":32"#, "differs from the ASR tower"),
        (r#""hidden_size":64,"residual_scale":-1"#, "residual_scale"),
        (r#""hidden_size":64,"upsampling_factor":0"#, "upsampling_factor"),
    ] {
        let json = format!(
            r#"{{"model_type":"nemo_speechlm","audio_config":{{"asr_config":{{"hidden_size":64,
            "num_attention_heads":2}}}},"word_timestamp_config":{{"num_attention_heads":2,{fields}}}}}"#
        );
        let err = ModelConfig::from_json(&json).unwrap_err().to_string();
        assert!(err.contains(needle), "{err} should mention {needle}");
    }
}

#[test]
fn empty_standalone_config_takes_its_own_defaults() {
    let ModelConfig::Diarization(d) = ModelConfig::from_json(r#"{"model_type":"nemotron3_diarization"}"#).unwrap()
    else {
        panic!("not a diarization config")
    };
    assert_eq!((d.encoder.hidden, d.encoder.heads, d.encoder.layers, d.head_hidden), (512, 8, 31, 192));
    assert_eq!(d.chunks, ChunkConfig { length: 340, left_context: 0, right_context: 40 });
    assert_eq!((d.cache.fifo_length, d.cache.update_period, d.cache.cache_length), (40, 300, 264));
    let streaming = &d.streaming_cache;
    assert_eq!((streaming.fifo_length, streaming.update_period, streaming.cache_length), (264, 222, 264));
}

#[test]
fn python_non_finite_numbers_are_read_as_null() {
    let text = r#"{"model_type":"nemo_speechlm","x":[0.0,Infinity,-Infinity,NaN],"s":"Infinity \"NaN\""}"#;
    assert_eq!(
        python_json_to_json(text),
        r#"{"model_type":"nemo_speechlm","x":[0.0,null,null,null],"s":"Infinity \"NaN\""}"#
    );
    assert!(ModelConfig::from_json(text).is_ok());
}

#[test]
fn rejects_bad_sizes_with_the_field_named() {
    for (json, needle) in [
        (r#"{"model_type":"nemo_speechlm","audio_config":{"asr_config":{"num_attention_heads":3}}}"#, "do not divide"),
        (r#"{"model_type":"nemo_speechlm","audio_config":{"asr_config":{"hidden_size":0}}}"#, "hidden_size = 0"),
        (
            r#"{"model_type":"nemotron3_diarization","audio_config":{"hidden_size":60,"num_attention_heads":2,
               "rope_parameters":{"partial_rotary_factor":0.5}}}"#,
            "must be even",
        ),
        (r#"{"model_type":"whisper"}"#, "unknown model_type"),
        (r#"{"model_type":"nemo_speechlm","audio_config":{"asr_config":{"hidden_size":"big"}}}"#, "parsing"),
    ] {
        let err = ModelConfig::from_json(json).unwrap_err().to_string();
        assert!(err.contains(needle), "{err} should mention {needle}");
    }
}
