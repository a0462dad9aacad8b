//! `ppcert generate`: print the bookings a run would send, as JSON.

use chrono::{DateTime, Utc};
use serde_json::json;

use crate::cli::GenerateArgs;
use crate::datagen::{DataProfile, Generator, run_id};
use crate::error::Failure;
use crate::exit_codes;

/// Midnight UTC today, so that `generate --seed N` prints the same bytes all day long.
fn today(now: DateTime<Utc>) -> DateTime<Utc> {
    now.date_naive()
        .and_hms_opt(0, 0, 0)
        .expect("midnight exists")
        .and_utc()
}

pub fn generate(args: GenerateArgs) -> Result<u8, Failure> {
    let seed = args.seed.unwrap_or_else(rand::random);
    let start = args.start.unwrap_or_else(|| today(Utc::now()));
    let profile = DataProfile {
        flight_plans: args.flight_plans,
        ..DataProfile::default()
    };
    let run = run_id(start, seed);
    let generator = Generator::new(seed, &run, start, profile);
    let bookings: Vec<_> = (0..args.count).map(|i| generator.booking(i)).collect();
    let out =
        json!({ "seed": seed, "start": start.to_rfc3339(), "run_id": run, "bookings": bookings });
    let text =
        serde_json::to_string_pretty(&out).map_err(|e| Failure::new(exit_codes::USAGE, e))?;
    crate::say!("{text}");
    Ok(exit_codes::SUCCESS)
}
