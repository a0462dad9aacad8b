//! The command line, declared with clap derive; the doc comments are the help text.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::builder::TypedValueParser;
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::sandbox::{ContractsLayout, DeltaShape};

/// Certify a travel partner's integration with the Partner Protection API on staging.
///
/// With no target, `ppcert run` runs against its embedded staging simulator, so you can see
/// the whole batch work at once.
#[derive(Debug, Parser)]
#[command(name = "ppcert", version, about, long_about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the embedded staging simulator ("sandbox") standalone, until Ctrl-C.
    Serve(ServeArgs),
    /// Print generated booking data as JSON: what a run would send.
    Generate(GenerateArgs),
}

/// Options of `ppcert generate`.
#[derive(Debug, Args, Clone)]
pub struct GenerateArgs {
    /// Data generation seed; the same seed and start give the same bytes [default: random].
    #[arg(long)]
    pub seed: Option<u64>,
    /// How many bookings.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub count: u64,
    /// The instant dates are relative to (RFC 3339) [default: today, 00:00 UTC].
    #[arg(long, value_parser = parse_instant)]
    pub start: Option<chrono::DateTime<chrono::Utc>>,
    /// Flight plans per booking; 2 or more gives multi-planning bookings.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=5))]
    pub flight_plans: u32,
}

fn parse_instant(value: &str) -> Result<chrono::DateTime<chrono::Utc>, String> {
    chrono::DateTime::parse_from_rfc3339(value)
        .map(|at| at.with_timezone(&chrono::Utc))
        .map_err(|e| format!("`{value}` is not an RFC 3339 date-time with offset: {e}"))
}

/// Options of `ppcert serve`.
#[derive(Debug, Args, Clone)]
pub struct ServeArgs {
    /// Loopback address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,
    /// Bearer token the sandbox accepts [default: a fresh random token, printed at start].
    #[arg(long, env = "PPCERT_SANDBOX_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Added to every response.
    #[arg(long, default_value_t = 0, value_name = "MS")]
    pub latency_ms: u64,
    /// Random extra latency, up to this much.
    #[arg(long, default_value_t = 0, value_name = "MS")]
    pub jitter_ms: u64,
    /// Answer 429 with Retry-After to every Nth request.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub rate_limit_every: Option<u64>,
    /// Seconds announced in Retry-After on injected 429s.
    #[arg(long, default_value_t = 1, value_name = "SECS")]
    pub retry_after_secs: u64,
    /// Answer 503 to every Nth request.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub unavailable_every: Option<u64>,
    /// Process every Nth POST, then drop its response (a lost response).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub drop_every: Option<u64>,
    /// Behave as production: claimDate is refused.
    #[arg(long)]
    pub production: bool,
    /// Answer with bare bodies instead of wrapping them in `data`.
    #[arg(long)]
    pub unwrapped: bool,
    /// How GET /subscriptions/{bookingNumber}/contracts groups contracts.
    #[arg(long, value_enum, default_value = "by-type")]
    pub contracts_layout: ContractsLayout,
    /// Success status of PATCH /subscriptions/{bookingNumber}.
    #[arg(long, default_value_t = 201, value_parser = clap::builder::PossibleValuesParser::new(["200", "201"]).map(|s| s.parse::<u16>().unwrap_or(201)))]
    pub update_status: u16,
    /// Success status of DELETE /quotes/{id}.
    #[arg(long, default_value_t = 204, value_parser = clap::builder::PossibleValuesParser::new(["200", "202", "204"]).map(|s| s.parse::<u16>().unwrap_or(204)))]
    pub delete_status: u16,
    /// How priceDelta is written.
    #[arg(long, value_enum, default_value = "number")]
    pub delta_shape: DeltaShape,
    /// Time a refundable claim stays in each status (ACCEPTED, REFUNDABLE) before moving on.
    #[arg(long, default_value_t = 2000, value_name = "MS")]
    pub claim_step_ms: u64,
}

/// When to color output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

/// Where files are read from, shared by several commands.
#[derive(Debug, Clone)]
pub struct Paths {
    pub config: Option<PathBuf>,
}
