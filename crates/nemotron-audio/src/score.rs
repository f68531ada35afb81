//! `score`: a hypothesis RTTM against a reference RTTM, as a table or one JSON object.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;
use nemotron_engine::scoring::{Components, FileScore, Score, ScoreOptions, read_rttm, read_uem, score};
use serde_json::{Value, json};

use crate::failure::Failure;
use crate::output;

/// `nemotron-audio score` arguments.
#[derive(Args)]
pub struct ScoreArgs {
    /// Reference RTTM.
    #[arg(long = "ref", value_name = "REF.rttm")]
    reference: PathBuf,
    /// Hypothesis RTTM.
    #[arg(long = "hyp", value_name = "HYP.rttm")]
    hypothesis: PathBuf,
    /// Seconds around each reference boundary left out, half on each side (NIST md-eval's 0.25; pyannote.metrics'
    /// default is 0).
    #[arg(long, default_value_t = 0.25, value_name = "SECONDS", value_parser = collar)]
    collar: f64,
    /// Leave out the regions where reference speakers overlap.
    #[arg(long)]
    skip_overlap: bool,
    /// Score only these regions (`<file> <channel> <start> <end>` lines); every file of the RTTMs must appear.
    #[arg(long, value_name = "FILE")]
    uem: Option<PathBuf>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

/// Runs `score`.
pub fn run(args: &ScoreArgs) -> Result<(), Failure> {
    let reference = read_rttm(&args.reference)?;
    let hypothesis = read_rttm(&args.hypothesis)?;
    let uem = args.uem.as_deref().map(read_uem).transpose()?;
    let options = ScoreOptions { collar: args.collar, skip_overlap: args.skip_overlap };
    let result = score(&reference, &hypothesis, uem.as_deref(), &options)?;
    let text = if args.json {
        let json = serde_json::to_string_pretty(&to_json(&result, &options));
        json.map_err(|e| Failure::Message(e.to_string()))? + "\n"
    } else {
        table(&result, &options)
    };
    output::write_stdout(&text, "the scores")
}

/// The overall rates (0–1) at the top level, then `files`.
fn to_json(result: &Score, options: &ScoreOptions) -> Value {
    let mut overall = rates(&result.total, result.jer(), result.scored_seconds());
    overall["collar"] = json!(options.collar);
    overall["skip_overlap"] = json!(options.skip_overlap);
    overall["files"] = result.files.iter().map(file_json).collect();
    overall
}

fn file_json(file: &FileScore) -> Value {
    let mut entry = json!({ "uri": file.uri });
    if let (Value::Object(entry), Value::Object(rates)) =
        (&mut entry, rates(&file.components, file.jer(), file.scored_seconds))
    {
        entry.extend(rates);
    }
    entry["mapping"] =
        file.mapping.iter().map(|(h, r)| (h.clone(), json!(r))).collect::<serde_json::Map<_, _>>().into();
    entry["speakers"] = file
        .speakers
        .iter()
        .map(|s| json!({ "reference": s.reference, "hypothesis": s.hypothesis, "jer": s.jer }))
        .collect();
    entry
}

/// Rates (`null` where pyannote defines none: no reference speech) and the seconds they come from.
fn rates(c: &Components, jer: f64, scored_seconds: f64) -> Value {
    json!({
        "der": c.der(),
        "miss": c.miss_rate(),
        "false_alarm": c.false_alarm_rate(),
        "confusion": c.confusion_rate(),
        "jer": jer,
        "scored_seconds": scored_seconds,
        "reference_speech": c.reference_speech,
        "correct": c.correct,
        "missed_speech": c.missed,
        "false_alarm_speech": c.false_alarm,
        "confusion_speech": c.confusion,
    })
}

/// One line per file and an overall line; rates in percent, `n/a` where undefined.
fn table(result: &Score, options: &ScoreOptions) -> String {
    let overlap = if options.skip_overlap { "overlap skipped" } else { "overlap scored" };
    let mut text = format!("collar {} s, {overlap}\n", options.collar);
    let width = result.files.iter().map(|f| f.uri.chars().count()).chain([7]).max().unwrap_or(7);
    let _ = writeln!(
        text,
        "{:width$}  {:>7}  {:>7}  {:>11}  {:>9}  {:>7}  {:>10}  mapping (hypothesis → reference)",
        "file", "DER", "miss", "false alarm", "confusion", "JER", "speech (s)"
    );
    let row = |text: &mut String, name: &str, c: &Components, jer: f64, mapping: &str| {
        let line = format!(
            "{name:width$}  {:>7}  {:>7}  {:>11}  {:>9}  {:>7}  {:>10.2}  {mapping}",
            percent(Some(c.der())),
            percent(c.miss_rate()),
            percent(c.false_alarm_rate()),
            percent(c.confusion_rate()),
            percent(Some(jer)),
            c.reference_speech,
        );
        let _ = writeln!(text, "{}", line.trim_end());
    };
    for f in &result.files {
        let mapping: Vec<String> = f.mapping.iter().map(|(h, r)| format!("{h} → {r}")).collect();
        row(&mut text, &f.uri, &f.components, f.jer(), &mapping.join(", "));
    }
    row(&mut text, "overall", &result.total, result.jer(), "");
    text
}

fn percent(rate: Option<f64>) -> String {
    rate.map_or_else(|| "n/a".to_string(), |r| format!("{:.2}%", 100.0 * r))
}

/// `--collar`: seconds ≥ 0.
fn collar(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(c) if c.is_finite() && c >= 0.0 => Ok(c),
        Ok(c) => Err(format!("{c} is not a number of seconds ≥ 0")),
        Err(e) => Err(e.to_string()),
    }
}
