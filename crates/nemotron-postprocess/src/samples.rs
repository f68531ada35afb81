//! Why 16 kHz samples cannot be diarized or encoded: no samples, fewer than [`MIN_SAMPLES`], or a NaN or infinity. One
//! error for both places that check: the audio readers (`nemotron-engine`'s `io`) on what they decode, and the model
//! (`nemotron-towers`) on samples that came from elsewhere or arrive in a stream.

use crate::time::MIN_SAMPLES;

/// 16 kHz samples no run can take.
#[derive(Debug, thiserror::Error)]
pub enum SampleError {
    /// No samples at all.
    #[error("{input}: the audio is empty")]
    Empty {
        /// The file, `in-memory audio` or `audio stream`.
        input: String,
    },
    /// Fewer than [`MIN_SAMPLES`] samples at 16 kHz.
    #[error("{input}: {samples} samples at 16 kHz, at least {MIN_SAMPLES} (10 ms) are needed")]
    TooShort {
        /// The file, `in-memory audio` or `audio stream`.
        input: String,
        /// Samples there are.
        samples: usize,
    },
    /// A NaN or infinite sample.
    #[error("{input}: sample {index} is {value}, not a finite number")]
    NonFinite {
        /// The file, `in-memory audio` or `audio stream`.
        input: String,
        /// Position of the first non-finite sample: among a file's interleaved samples, since a stream's start.
        index: usize,
        /// The sample itself (NaN or ±infinity).
        value: f32,
    },
}

/// The first NaN or infinity of `samples`, as the error of `input` with its index counted from `first`.
pub fn non_finite(input: &str, samples: &[f32], first: usize) -> Result<(), SampleError> {
    match samples.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        Some((i, &value)) => Err(SampleError::NonFinite { input: input.to_owned(), index: first + i, value }),
        None => Ok(()),
    }
}

/// Refuses samples no run can take: none, a NaN or infinity (the first named), fewer than [`MIN_SAMPLES`].
pub fn check_samples(input: &str, samples: &[f32]) -> Result<(), SampleError> {
    if samples.is_empty() {
        return Err(SampleError::Empty { input: input.to_owned() });
    }
    non_finite(input, samples, 0)?;
    if samples.len() < MIN_SAMPLES {
        return Err(SampleError::TooShort { input: input.to_owned(), samples: samples.len() });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_name_the_input_and_the_first_bad_sample() {
        let error = check_samples("a.wav", &[]).unwrap_err();
        assert!(matches!(error, SampleError::Empty { .. }) && error.to_string() == "a.wav: the audio is empty");
        let short = vec![0.0; MIN_SAMPLES - 1];
        assert!(
            matches!(check_samples("x", &short), Err(SampleError::TooShort { samples, .. }) if samples == MIN_SAMPLES - 1)
        );
        let mut bad = vec![0.0; MIN_SAMPLES * 2];
        bad[7] = f32::NAN;
        bad[9] = f32::INFINITY;
        assert!(matches!(check_samples("x", &bad), Err(SampleError::NonFinite { index: 7, .. })));
        assert!(
            matches!(non_finite("s", &bad[8..], 100), Err(SampleError::NonFinite { index: 101, value, .. }) if value.is_infinite())
        );
        assert!(check_samples("x", &vec![0.5; MIN_SAMPLES]).is_ok());
    }
}
