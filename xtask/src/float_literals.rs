//! Decimal float literals past f32's range. naga rounds `-3.40282347e38` to f32's lowest value, but Chromium's
//! WGSL compiler (Tint) refuses any literal beyond `f32::MAX` as "cannot be represented as 'f32'", so a kernel that
//! validates here would fail in the browser. Hex literals (`0x1.fffffep+127f`) spell the extremes exactly.

/// Every decimal float literal of `source` (comments skipped) whose magnitude is above `f32::MAX`, as
/// `line N: literal`.
pub fn out_of_f32_range(source: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (index, line) in source.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default();
        let bytes = code.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let starts_number = bytes[i].is_ascii_digit() && (i == 0 || !is_word(bytes[i - 1]));
            if !starts_number {
                i += 1;
                continue;
            }
            let end = literal_end(bytes, i);
            let literal = &code[i..end];
            let numeric = literal.trim_end_matches(['f', 'h']);
            let hex = literal.starts_with("0x") || literal.starts_with("0X");
            if !hex
                && let Ok(value) = numeric.parse::<f64>()
                && value.is_finite()
                && value > f64::from(f32::MAX)
            {
                found.push(format!("line {}: {literal}", index + 1));
            }
            i = end;
        }
    }
    found
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'.'
}

/// The end of the literal starting at `start`: digits, letters, dots, and a sign right after an exponent mark.
fn literal_end(bytes: &[u8], start: usize) -> usize {
    let mut end = start;
    while end < bytes.len() {
        let b = bytes[end];
        let exponent_sign = (b == b'+' || b == b'-') && matches!(bytes[end - 1], b'e' | b'E' | b'p' | b'P');
        if !(is_word(b) || exponent_sign) {
            break;
        }
        end += 1;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::out_of_f32_range;

    #[test]
    fn finds_decimal_literals_past_f32_max_only() {
        let source = "let a = -3.40282347e38;\nlet b = -3.4028234e38;\nlet c = -0x1.fffffep+127f;\n\
                      // 1e39 in a comment\nlet d = 1e39f; let e = x1e40; let f = 2.5e-3;";
        assert_eq!(out_of_f32_range(source), ["line 1: 3.40282347e38", "line 5: 1e39f"]);
    }
}
