//! The command line, declared with clap derive; the doc comments are the help text.

mod values;

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::builder::TypedValueParser;
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::bounds;
use crate::environment::Environment;
use crate::sandbox::{
    ApiDialect, ContractsLayout, DeltaShape, ErrorShape, QuoteWrapper, RateLimitHeader,
};
use crate::webhook::scheme::Scheme;
use values::{parse_instant, parse_size, webhook_url};

/// Certify a travel partner's integration with the Partner Protection API on staging.
///
/// With no target, `ppcert run` runs against its embedded staging simulator, so you can see
/// the whole batch work at once.
#[derive(Debug, Parser)]
#[command(name = "ppcert", version, about, long_about, after_help = EXIT_CODES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The documented exit codes, shown under every `--help`.
pub const EXIT_CODES: &str = "Exit codes:
  0    every requirement met (or the command succeeded)
  1    the run finished, a requirement not met or a step failed; verify found a difference;
       diff (or --baseline) found a regression
  2    usage, config or scenario error (nothing sent)
  3    token rejected (401 on the first call)
  4    target unreachable (no answer to the first call, or not the API root)
  5    refused by the production guard
  6    requests were sent but the bundle could not be written or signed (the journal keeps them)
  126  proxy -- COMMAND: COMMAND was found but could not be started
  127  proxy -- COMMAND: COMMAND was not found
  130  interrupted (Ctrl-C); the bundle is written, marked incomplete
With `proxy -- COMMAND`, a COMMAND that fails ends ppcert with COMMAND's own exit code.";

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a scenario (default `certification`) and write the evidence bundle.
    Run(RunArgs),
    /// POST /quotes once: any answer but 401 means the token is valid; nothing is created.
    CheckToken(TargetArgs),
    /// Check scenario and config files without sending a request.
    Validate(ValidateArgs),
    /// List the scenarios found, with description and requirements.
    Scenarios,
    /// List the built-in dialects: how a staging may spell its calls.
    Dialects,
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) on stdout.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) on stdout: `ppcert man > ppcert.1`.
    Man,
    /// Print a JSON Schema on stdout, for editors and CI checks.
    #[command(subcommand)]
    Schema(SchemaCommand),
    /// Webhooks: receive and verify a staging's deliveries.
    #[command(subcommand)]
    Webhook(WebhookCommand),
    /// Make one of each call against an unfamiliar staging, show what was read from where,
    /// prove where unread values are, and optionally write the ppcert.toml that works.
    Probe(ProbeArgs),
    /// Re-render the reports of a finished run from its evidence.json, once its journal
    /// confirms the verdict and ledger (refuses, exit 1, when it does not).
    Report(ReportArgs),
    /// Check a bundle (or package) against its MANIFEST.sha256 and compute its verdict again
    /// from its journal; with --key, check its signature too. Exits 1 naming any difference.
    /// A dossier (`ppcert dossier`) is checked down to every bundle it holds.
    Verify(VerifyArgs),
    /// Run the embedded staging simulator ("sandbox") standalone, until Ctrl-C.
    Serve(ServeArgs),
    /// Certify your own integration from its traffic: a proxy in front of the API (staging, or
    /// the embedded sandbox by default) that forwards every request unchanged, checks each
    /// against the spec's rules, counts it as the provider does, and writes the evidence bundle
    /// when stopped (Ctrl-C or --until-met). `ppcert proxy -- COMMAND` runs your own test
    /// suite through it and stops when the suite exits.
    Proxy(ProxyArgs),
    /// Print generated booking data as JSON: what a run would send.
    Generate(GenerateArgs),
    /// Make an Ed25519 key pair to sign bundles with: KEY (PKCS#8 PEM, private, mode 0600)
    /// and KEY.pub (SPKI PEM: what you give the provider). Never overwrites a key.
    Keygen(KeygenArgs),
    /// Sign a finished bundle: write DIR/attestation.intoto.json, an in-toto statement in a
    /// DSSE envelope naming every file by SHA-256 and the verdict computed again from the
    /// journal. Refuses a bundle that does not verify. Signs a dossier likewise.
    Sign(SignArgs),
    /// Pack a bundle and its attestation into one .tar.gz to hand to the provider
    /// (`ppcert verify FILE.tar.gz` checks it without unpacking).
    Package(PackageArgs),
    /// Gather verified bundles (runs and proxy sessions) of one partner and target into a
    /// dossier: one ledger where each operation counts once, each requirement naming the
    /// bundles that proved it; `verify`, `sign` and `package` work on it. Exit 0 when the
    /// dossier meets every requirement, 1 when not (or a bundle does not verify), 2 when a
    /// bundle belongs to another partner, target or environment.
    Dossier(DossierArgs),
    /// Compare two bundles (directories or packages, each verified first): verdict, ledger,
    /// and per operation statuses, answer shapes, errors and latency. Regressions first, then
    /// other changes; ids, timestamps and generated data never count. Exits 1 on a regression.
    /// With --run and --proxy instead: which side changed, the staging or the partner's client.
    Diff(DiffArgs),
    /// Export a bundle's exchanges for other tools: `--har` writes HAR 1.2 (browser devtools,
    /// HAR viewers), redacted as the evidence is.
    Export(ExportArgs),
}

/// What `ppcert schema` prints.
#[derive(Debug, Subcommand, Clone, Copy)]
pub enum SchemaCommand {
    /// The JSON Schema (draft-07) of `ppcert.toml`: every key with its description. Point your
    /// editor at it (`#:schema ./ppcert.schema.json` as the file's first line, for Taplo and
    /// VS Code's Even Better TOML): `ppcert schema config > ppcert.schema.json`.
    Config,
}

/// Options of `ppcert dossier`.
#[derive(Debug, Args, Clone)]
pub struct DossierArgs {
    /// Bundle directories or packages to add.
    #[arg(required = true, value_name = "BUNDLE")]
    pub bundles: Vec<PathBuf>,
    /// The dossier's directory: made when it does not exist, added to when it does.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The signer's public key (KEY.pub): every bundle added must carry a valid signature by it.
    #[arg(long, value_name = "KEY.pub")]
    pub key: Option<PathBuf>,
}

/// Options of `ppcert diff`.
#[derive(Debug, Args, Clone)]
pub struct DiffArgs {
    /// The earlier bundle: a directory or a package (`ppcert package`).
    #[arg(value_name = "BASE", required_unless_present = "run", requires = "new")]
    pub base: Option<PathBuf>,
    /// The later bundle, compared with BASE.
    #[arg(value_name = "NEW")]
    pub new: Option<PathBuf>,
    /// Attribution: the pair of `ppcert run` bundles, earlier then later.
    #[arg(long, num_args = 2, value_names = ["BASE", "NEW"], requires = "proxy", conflicts_with = "base")]
    pub run: Option<Vec<PathBuf>>,
    /// Attribution: the pair of `ppcert proxy` bundles (the partner's client) against the
    /// same staging, earlier then later.
    #[arg(long, num_args = 2, value_names = ["BASE", "NEW"], requires = "run")]
    pub proxy: Option<Vec<PathBuf>>,
    /// Print one JSON object on stdout instead of text (its shape: docs/drift.md).
    #[arg(long)]
    pub json: bool,
}

/// Options of `ppcert export`.
#[derive(Debug, Args, Clone)]
pub struct ExportArgs {
    /// Write HAR 1.2 (the only format so far).
    #[arg(long, required = true)]
    pub har: bool,
    /// The bundle: a directory or a package (verified first).
    #[arg(value_name = "BUNDLE")]
    pub bundle: PathBuf,
    /// Where the HAR goes [default: stdout]. Never over an existing file.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Where to send requests, and with which token.
#[derive(Debug, Args, Clone, Default)]
pub struct TargetArgs {
    /// Target API root; may carry a path prefix [default: the embedded sandbox].
    #[arg(long, env = "PPCERT_BASE_URL", value_name = "URL")]
    pub base_url: Option<String>,
    /// File holding the bearer token (else $PPCERT_TOKEN); never given as a plain value. Read
    /// again when the staging rejects the token, so a rotated file is picked up.
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,
    /// Command printing the token (or JSON {"access_token", "expires_in"}); run before the
    /// first call and again before the token expires or when it is rejected. No shell unless
    /// you name one [default: `[auth] command`].
    #[arg(long, value_name = "CMD")]
    pub token_command: Option<String>,
    /// Config file [default: ./ppcert.toml if present].
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Per-request timeout [default: `[run] timeout_secs`, else 30].
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(bounds::TIMEOUT_SECS))]
    pub timeout: Option<u64>,
    /// What the target is: `staging`, or `production` (arms the production guard; never
    /// sends claimDate) [default: `[target] environment`, else staging].
    #[arg(long, value_name = "ENV", value_parser = clap::builder::PossibleValuesParser::new(["staging", "production"]).map(|s| if s == "production" { Environment::Production } else { Environment::Staging }))]
    pub environment: Option<Environment>,
    /// Extra root certificate (PEM) to trust, for a corporate TLS-inspecting proxy. Proxies
    /// themselves come from HTTPS_PROXY / NO_PROXY.
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<PathBuf>,
    /// Client certificate (PEM) for a staging that requires mutual TLS; needs --key
    /// [default: `[target] client_cert`].
    #[arg(long, value_name = "FILE", requires = "key")]
    pub cert: Option<PathBuf>,
    /// The private key (PEM) of --cert; never printed [default: `[target] client_key`].
    #[arg(long, value_name = "FILE", requires = "cert")]
    pub key: Option<PathBuf>,
    /// A header sent on every API call, `NAME: VALUE` (repeatable); adds to or overrides
    /// `[target.headers]`, an endpoint's own headers override it. The value is a template:
    /// `{{ env.NAME }}` reads the environment (a secret, redacted everywhere).
    #[arg(long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// How the staging spells its calls: `spec`, `provider-docs` or a dialect file
    /// [default: `[target] dialect`, else spec]. See `ppcert dialects`.
    #[arg(long, value_name = "NAME|PATH")]
    pub dialect: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum WebhookCommand {
    /// Receive webhook deliveries: verify each signature on the raw bytes, answer 2xx for a
    /// valid event and 401 for a missing or wrong one, deduplicate replays, print a line per
    /// delivery and append each to --out (JSONL). Runs until Ctrl-C.
    Listen(WebhookListenArgs),
    /// Grade your webhook receiver: send it valid deliveries (contract.created, claim.updated
    /// for each status) and hostile ones (wrong, missing or stale signature, altered body,
    /// replay, malformed JSON, unknown event), print a table, and exit 0 only when every
    /// expectation holds (1 otherwise, 4 when nothing answered).
    Send(WebhookSendArgs),
}

/// Options of `ppcert proxy`.
#[derive(Debug, Args, Clone)]
pub struct ProxyArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Address your integration sends its requests to (port 0 picks a free port). With
    /// COMMAND, the default is a free loopback port. `--addr` is the same flag, as on `serve`
    /// and `webhook listen`.
    #[arg(long, visible_alias = "addr", default_value = DEFAULT_LISTEN)]
    pub listen: SocketAddr,
    /// Where the evidence bundle goes [default: reports/<run-id>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Stop, and write the bundle, as soon as every requirement is met.
    #[arg(long)]
    pub until_met: bool,
    /// Add the session's bundle to the dossier DIR when it ends (a new DIR starts one).
    #[arg(long, value_name = "DIR")]
    pub dossier: Option<PathBuf>,
    /// Answer a request that breaks a rule locally with a 400 instead of forwarding it (always
    /// on against production).
    #[arg(long)]
    pub strict: bool,
    /// For partners that do not sell flights: no flight-cancellation requirement.
    #[arg(long)]
    pub no_flight_cancellations: bool,
    /// The partner's name, as the evidence shows it [default: `[partner] name`].
    #[arg(long, env = "PPCERT_PARTNER_NAME", value_name = "NAME")]
    pub partner_name: Option<String>,
    /// With COMMAND: end it (SIGTERM to its process group, SIGKILL 10 s later) as soon as
    /// every requirement is met; implies --until-met. Without it, COMMAND runs to its end.
    #[arg(long, requires = "command")]
    pub stop_command_when_met: bool,
    /// Your own test suite or client, run through the proxy: `ppcert proxy -- npm test`.
    /// Started directly (no shell) with PPCERT_PROXY_URL and PPCERT_BASE_URL set to the
    /// proxy's root (path prefix included) and, against the embedded sandbox, PPCERT_TOKEN set
    /// to the sandbox's token; its output passes through. The proxy stops when it exits and
    /// the bundle is written. Exit code: COMMAND's own when it failed, else the table below.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<std::ffi::OsString>,
    /// Compare the session with an earlier bundle, as `run --baseline` does.
    #[arg(long, value_name = "BUNDLE")]
    pub baseline: Option<PathBuf>,
    /// Accept what regressed since --baseline, as `run --accept-drift` does.
    #[arg(long, requires = "baseline")]
    pub accept_drift: bool,
    /// Sign the bundle with this private key (from `ppcert keygen`), as `run --sign-key`
    /// does. Read before the proxy listens.
    #[arg(long, value_name = "KEY")]
    pub sign_key: Option<PathBuf>,
    /// Print the final summary as one JSON object on stdout instead of text (the listening
    /// address then goes to stderr).
    #[arg(long)]
    pub json: bool,
    /// Inject faults into your client's calls and grade how it handles them: `standard` (a
    /// 429 on a quote, a 503 on a subscription, a lost answer on a subscription, a 503 on a
    /// claim) or a TOML file of [[faults]] (operation, kind =
    /// status|lost_answer|delay|duplicate_webhook, nth or every). Refused against production
    /// (exit 5).
    #[arg(long, value_name = "PLAN")]
    pub faults: Option<String>,
    /// Stand in the webhook path: the staging delivers to the proxy's `/_ppcert/webhooks`, and
    /// each delivery is passed on as it came (body and signature headers) to your receiver at
    /// URL, and recorded. Needed by a plan's duplicate_webhook faults.
    #[arg(long, value_name = "URL", value_parser = webhook_url)]
    pub webhook_forward: Option<url::Url>,
    #[command(flatten)]
    pub listen_limits: ListenArgs,
}

/// How a long-lived listener (`serve`, `proxy`, `webhook listen`) treats its clients.
#[derive(Debug, Args, Clone, Default)]
pub struct ListenArgs {
    /// Allow an address other than loopback: the listener is then reachable from the network
    /// (a warning says what is exposed).
    #[arg(long)]
    pub public: bool,
    /// Largest request body (bytes, or with KiB/MiB); a larger one is answered 413 without
    /// being read [default: 1MiB; proxy: 8MiB].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_body: Option<usize>,
    /// Seconds a client has to send a whole request header; then the connection is closed.
    #[arg(long, default_value_t = 10, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub header_timeout: u64,
    /// Seconds a client has to send a whole request body; then it is answered 408.
    #[arg(long, default_value_t = 30, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub body_timeout: u64,
    /// Connections served at once; more wait until one ends.
    #[arg(long, default_value_t = 128, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=65_536).map(|n| n as usize))]
    pub max_connections: usize,
    /// Seconds in-flight requests may still take after the first Ctrl-C (a second one exits
    /// at once).
    #[arg(long, default_value_t = 5, value_name = "SECS", value_parser = clap::value_parser!(u64).range(0..=600))]
    pub shutdown_grace: u64,
}

/// Where `ppcert proxy` listens unless told.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8181";

/// Options of `ppcert webhook send`.
#[derive(Debug, Args, Clone)]
pub struct WebhookSendArgs {
    /// Your receiver's URL.
    #[arg(long, value_name = "URL", value_parser = webhook_url)]
    pub url: url::Url,
    /// Signature scheme your receiver checks: provider-docs, standard-webhooks, github.
    #[arg(long, default_value = "provider-docs", value_parser = scheme_parser())]
    pub scheme: Scheme,
    /// File holding your receiver's secret (else $PPCERT_WEBHOOK_SECRET); never a plain flag.
    #[arg(long, value_name = "PATH")]
    pub webhook_secret_file: Option<PathBuf>,
    /// Also write the results as JUnit XML.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
}

/// Options of `ppcert webhook listen`.
#[derive(Debug, Args, Clone)]
pub struct WebhookListenArgs {
    /// Address to listen on (port 0 picks a free port); `--listen` is the same flag.
    #[arg(long, visible_alias = "listen", default_value = "127.0.0.1:3000")]
    pub addr: SocketAddr,
    /// Signature scheme: provider-docs (Koala-Signature), standard-webhooks, github.
    #[arg(long, default_value = "provider-docs", value_parser = scheme_parser())]
    pub scheme: Scheme,
    /// File holding the webhook secret (else $PPCERT_WEBHOOK_SECRET); never a plain flag.
    #[arg(long, value_name = "PATH")]
    pub webhook_secret_file: Option<PathBuf>,
    /// Append every delivery, with its verdict, to this JSONL file.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub listen_limits: ListenArgs,
}

/// Options of `ppcert probe`.
#[derive(Debug, Args, Clone)]
pub struct ProbeArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Write a ppcert.toml with the dialect and the captures the probe proved (your own
    /// settings from --config are kept).
    #[arg(long, value_name = "PATH")]
    pub write_config: Option<std::path::PathBuf>,
    /// Let --write-config replace an existing file (never a symbolic link).
    #[arg(long, requires = "write_config")]
    pub force: bool,
}

/// Options of `ppcert run`.
#[derive(Debug, Args, Clone, Default)]
pub struct RunArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Scenario name (scenarios/NAME.toml, else built in) or path to a scenario file
    /// [default: certification; a resumed run keeps its own].
    #[arg(long, value_name = "NAME|PATH")]
    pub scenario: Option<String>,
    /// Where the evidence bundle goes [default: reports/<run-id>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Data generation seed; same seed, same data [default: random, recorded].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Flows in flight at once [default: 4].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(bounds::CONCURRENCY))]
    pub concurrency: Option<u32>,
    /// Attempts after the first, for retryable failures only [default: 3].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(bounds::RETRIES))]
    pub retries: Option<u32>,
    /// Multiply every flow's repeat count (load and soak runs) [default: 1; a resumed run
    /// keeps its own].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(bounds::SCALE))]
    pub scale: Option<u32>,
    /// For partners that do not sell flights: skip flight-cancellation flows and requirements.
    #[arg(long)]
    pub no_flight_cancellations: bool,
    /// Continue an interrupted run from DIR/journal.jsonl.
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    /// Send only what the dossier DIR still lacks (the fewest flows that make it; nothing
    /// when it lacks nothing), then add this run's bundle to it; a new DIR starts a dossier.
    #[arg(long, value_name = "DIR", conflicts_with = "resume")]
    pub dossier: Option<PathBuf>,
    /// Reports to write besides evidence.json, the journal and the manifest (always written):
    /// html, md, junit, json, and ctrf (ctrf.json, a Common Test Report Format document, only when named) [default: html, md, junit].
    #[arg(long, value_delimiter = ',', value_parser = crate::formats::Format::parse, value_name = "LIST")]
    pub format: Vec<Option<crate::formats::Format>>,
    /// The partner's name, as the evidence shows it [default: `[partner] name`].
    #[arg(long, env = "PPCERT_PARTNER_NAME", value_name = "NAME")]
    pub partner_name: Option<String>,
    /// Sign the bundle with this private key (from `ppcert keygen`): writes
    /// attestation.intoto.json, as `ppcert sign` does. Read before anything is sent.
    #[arg(long, value_name = "KEY")]
    pub sign_key: Option<PathBuf>,
    /// Compare the run with an earlier bundle (directory or package, verified before anything
    /// is sent): the reports gain a "Since the baseline" section, and a run that passed but
    /// regressed exits 1 (see `ppcert diff`).
    #[arg(long, value_name = "BUNDLE")]
    pub baseline: Option<PathBuf>,
    /// With --baseline: the regressions are reported and recorded in evidence.json as
    /// accepted, and do not fail the run (it exits as without a baseline), so this bundle can
    /// be the next baseline. For a change of the staging that is understood and intended.
    #[arg(long, requires = "baseline")]
    pub accept_drift: bool,
    /// First retry delay; later ones double, with jitter [default: 250].
    #[arg(long, value_name = "MS", hide = true)]
    pub backoff_ms: Option<u64>,
    #[command(flatten)]
    pub webhooks: RunWebhookArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Webhooks during a run: received and verified while the run works, shown in the evidence
/// beside the claim statuses polling saw. Never a counted requirement, never waited for.
#[derive(Debug, Args, Clone, Default)]
pub struct RunWebhookArgs {
    /// Against the embedded sandbox: have it deliver webhooks to a receiver the run opens on
    /// loopback (a fresh secret per run).
    #[arg(long)]
    pub webhooks: bool,
    /// Against your staging: listen on ADDR for its deliveries while the run works (your
    /// staging must be configured to deliver there), verified with --webhook-secret-file or
    /// $PPCERT_WEBHOOK_SECRET.
    #[arg(long, value_name = "ADDR")]
    pub webhook_listen: Option<SocketAddr>,
    /// How deliveries are signed: provider-docs (Koala-Signature), standard-webhooks, github.
    #[arg(long, default_value = "provider-docs", value_parser = scheme_parser())]
    pub webhook_scheme: Scheme,
    /// File holding the webhook secret (else $PPCERT_WEBHOOK_SECRET); never a plain flag.
    #[arg(long, value_name = "PATH", requires = "webhook_listen")]
    pub webhook_secret_file: Option<PathBuf>,
    /// Allow --webhook-listen on an address other than loopback (reachable from the network).
    #[arg(long, requires = "webhook_listen")]
    pub public: bool,
}

/// Output control, shared by the commands that show progress.
#[derive(Debug, Args, Clone, Default)]
pub struct OutputArgs {
    /// Print only the final summary (and errors).
    #[arg(long, short)]
    pub quiet: bool,
    /// Plain progress lines instead of bars.
    #[arg(long)]
    pub no_progress: bool,
    /// Color: auto (terminal without NO_COLOR), always, never.
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorChoice,
    /// Print each exchange as it ends (method, URL, status, duration) on stderr.
    #[arg(long, short)]
    pub verbose: bool,
    /// Print the final summary as one JSON object on stdout instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Options of `ppcert report`.
#[derive(Debug, Args, Clone)]
pub struct ReportArgs {
    /// The run's bundle directory.
    pub dir: PathBuf,
    /// Which reports to render: html, md, junit, ctrf [default: html, md, junit].
    #[arg(long, value_delimiter = ',', value_parser = crate::formats::Format::parse)]
    pub format: Vec<Option<crate::formats::Format>>,
}

/// Options of `ppcert verify`.
#[derive(Debug, Args, Clone)]
pub struct VerifyArgs {
    /// The run's bundle directory, or a package written by `ppcert package`.
    #[arg(value_name = "DIR|FILE.tar.gz")]
    pub dir: PathBuf,
    /// The signer's public key (KEY.pub): the bundle must carry a valid signature by it.
    #[arg(long, value_name = "KEY.pub")]
    pub key: Option<PathBuf>,
}

/// Options of `ppcert keygen`.
#[derive(Debug, Args, Clone)]
pub struct KeygenArgs {
    /// Where the private key goes (a missing directory is made, readable by you only); the
    /// public key goes to the same path plus `.pub`.
    #[arg(long, value_name = "KEY")]
    pub out: PathBuf,
}

/// Options of `ppcert sign`.
#[derive(Debug, Args, Clone)]
pub struct SignArgs {
    /// The run's bundle directory.
    pub dir: PathBuf,
    /// The private key (PKCS#8 PEM, from `ppcert keygen`).
    #[arg(long, value_name = "KEY")]
    pub key: PathBuf,
    /// Replace an existing attestation (by default a signed bundle is left as it is).
    #[arg(long)]
    pub force: bool,
}

/// Options of `ppcert package`.
#[derive(Debug, Args, Clone)]
pub struct PackageArgs {
    /// The run's bundle directory.
    pub dir: PathBuf,
    /// The archive to write [default: DIR.tar.gz]; never overwritten.
    #[arg(long, value_name = "FILE.tar.gz")]
    pub out: Option<PathBuf>,
}

/// Options of `ppcert validate`.
#[derive(Debug, Args, Clone)]
pub struct ValidateArgs {
    /// Scenario or config files [default: ./ppcert.toml and ./scenarios/*.toml].
    pub files: Vec<PathBuf>,
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

/// Options of `ppcert serve`.
#[derive(Debug, Args, Clone)]
pub struct ServeArgs {
    /// Address to listen on (port 0 picks a free port); other than loopback only with --public.
    /// `--listen` is the same flag, as on `proxy`.
    #[arg(long, visible_alias = "listen", default_value = "127.0.0.1:8080")]
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
    /// Answer 429 with Retry-After to every Nth request (`--status-429-every`: the name of
    /// the `proxy --faults` kind).
    #[arg(long, visible_alias = "status-429-every", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub rate_limit_every: Option<u64>,
    /// Seconds announced in Retry-After on injected 429s.
    #[arg(long, default_value_t = 1, value_name = "SECS")]
    pub retry_after_secs: u64,
    /// Answer 503 to every Nth request (`--status-503-every`).
    #[arg(long, visible_alias = "status-503-every", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub unavailable_every: Option<u64>,
    /// Process every Nth POST, then drop its response (a lost response;
    /// `--lost-answer-every`).
    #[arg(long, visible_alias = "lost-answer-every", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub drop_every: Option<u64>,
    /// Process every Nth POST, then answer 500 instead of its success (the write took
    /// effect; the answer says it failed).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub error_after_write_every: Option<u64>,
    /// Behave as production: claimDate is refused.
    #[arg(long)]
    pub production: bool,
    /// Answer with bare bodies instead of wrapping them in `data`.
    #[arg(long)]
    pub unwrapped: bool,
    /// How GET /subscriptions/{bookingNumber}/contracts groups contracts: `by-type`
    /// ({"WITHDRAWAL": [...]}), `nested` ({"contracts": {"WITHDRAWAL": [...]}}) or `list`
    /// ([{"productType": "WITHDRAWAL", ...}]).
    #[arg(long, default_value = "by-type", value_parser = clap::builder::PossibleValuesParser::new(["by-type", "nested", "list"]).map(|s| match s.as_str() { "nested" => ContractsLayout::Nested, "list" => ContractsLayout::List, _ => ContractsLayout::ByType }))]
    pub contracts_layout: ContractsLayout,
    /// Success status of PATCH /subscriptions/{bookingNumber} (204: no body).
    #[arg(long, default_value_t = 201, value_parser = clap::builder::PossibleValuesParser::new(["200", "201", "204"]).map(|s| s.parse::<u16>().unwrap_or(201)))]
    pub update_status: u16,
    /// Success status of POST /contracts/{contractId}/claims (202: accepted for processing).
    #[arg(long, default_value_t = 201, value_parser = clap::builder::PossibleValuesParser::new(["201", "202"]).map(|s| s.parse::<u16>().unwrap_or(201)))]
    pub claim_status: u16,
    /// Answer a new subscription with an empty 201 whose Location names the contract.
    #[arg(long)]
    pub location_ids: bool,
    /// Require an Idempotency-Key header on subscriptions and claims; a repeated key replays
    /// the first answer without writing again.
    #[arg(long)]
    pub require_idempotency_key: bool,
    /// List a new booking's contracts only MS milliseconds after its subscription is answered
    /// (read-after-write lag); until then the contracts read lists none, and neither the
    /// subscription's nor an update's answer names them.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub contracts_delay_ms: Option<u64>,
    /// Require If-Match on PATCH /subscriptions/{bn} with the ETag the contracts read carries
    /// (428 without it, 412 when stale; the ETag changes with every update).
    #[arg(long)]
    pub require_if_match: bool,
    /// Issue tokens that live SECS seconds at POST /oauth/token (OAuth 2.0 client credentials:
    /// --client-id, with the sandbox's token as the client secret); the API then accepts only
    /// those, and answers an expired one 401 with WWW-Authenticate: Bearer error="invalid_token".
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub token_ttl: Option<u64>,
    /// The client id POST /oauth/token accepts (with --token-ttl).
    #[arg(long, default_value = crate::sandbox::DEFAULT_CLIENT_ID, requires = "token_ttl")]
    pub client_id: String,
    /// Where injected 429s announce their wait: `retry-after`, `ratelimit-reset` (seconds)
    /// or `x-ratelimit-reset` (a Unix time).
    #[arg(long, default_value = "retry-after", value_parser = clap::builder::PossibleValuesParser::new(["retry-after", "ratelimit-reset", "x-ratelimit-reset"]).map(|s| match s.as_str() { "ratelimit-reset" => RateLimitHeader::RateLimitReset, "x-ratelimit-reset" => RateLimitHeader::XRateLimitReset, _ => RateLimitHeader::RetryAfter }))]
    pub rate_limit_header: RateLimitHeader,
    /// Success status of DELETE /quotes/{id}.
    #[arg(long, default_value_t = 204, value_parser = clap::builder::PossibleValuesParser::new(["200", "202", "204"]).map(|s| s.parse::<u16>().unwrap_or(204)))]
    pub delete_status: u16,
    /// How priceDelta is written: `number` (12.5), `string` ("12.50"), `object`
    /// ({"amount": 12.5, "currency": "EUR"}) or `units-nanos` ({"currencyCode": "EUR",
    /// "units": "12", "nanos": 500000000}, prices too).
    #[arg(long, default_value = "number", value_parser = clap::builder::PossibleValuesParser::new(["number", "string", "object", "units-nanos"]).map(|s| match s.as_str() { "string" => DeltaShape::String, "object" => DeltaShape::Object, "units-nanos" => DeltaShape::UnitsNanos, _ => DeltaShape::Number }))]
    pub delta_shape: DeltaShape,
    /// Time a refundable claim stays in each status (ACCEPTED, REFUNDABLE) before moving on.
    #[arg(long, default_value_t = 2000, value_name = "MS")]
    pub claim_step_ms: u64,
    /// Serve the API under a path prefix, e.g. /partner-api.
    #[arg(long, value_name = "PATH")]
    pub path_prefix: Option<String>,
    /// Where the quote answer's fields go: `none`, `quote` ({"quote": {...}}) or
    /// `result-quote` ({"result": {"quote": {...}}}, which needs captures to read).
    #[arg(long, default_value = "none", value_parser = clap::builder::PossibleValuesParser::new(["none", "quote", "result-quote"]).map(|s| match s.as_str() { "quote" => QuoteWrapper::Quote, "result-quote" => QuoteWrapper::ResultQuote, _ => QuoteWrapper::None }))]
    pub quote_wrapper: QuoteWrapper,
    /// Put each contract element in a nested `contract` object beside its `claim`.
    #[arg(long)]
    pub nested_contract_objects: bool,
    /// Number ids (JSON numbers) instead of strings.
    #[arg(long)]
    pub integer_ids: bool,
    /// Answer 201 with an empty body (every creation but the quote's).
    #[arg(long)]
    pub empty_created: bool,
    /// How errors are written: `spec` ({"error": {...}}) or `problem` (RFC 9457).
    #[arg(long, default_value = "spec", value_parser = clap::builder::PossibleValuesParser::new(["spec", "problem"]).map(|s| if s == "problem" { ErrorShape::Problem } else { ErrorShape::Spec }))]
    pub errors: ErrorShape,
    /// Refuse a claimDate that is not a plain date (YYYY-MM-DD), as the spec types it.
    #[arg(long)]
    pub claim_date_day_only: bool,
    /// Decide claims after answering them: a claim's answer carries no status, and the
    /// contracts read shows it MS milliseconds after the claim (0: at once).
    #[arg(long, value_name = "MS")]
    pub claims_decided_after_ms: Option<u64>,
    /// Answer `POST /subscriptions` with 202 Accepted and the `Location` of an operation
    /// (`GET /operations/{id}`) that reads `running` for MS milliseconds, then `succeeded`
    /// carrying the subscription; the subscription is made and counted only when its
    /// operation is read as succeeded.
    #[arg(long, value_name = "MS")]
    pub subscription_operations_ms: Option<u64>,
    /// With --subscription-operations-ms, every Nth operation ends `failed` instead (its
    /// subscription is not made).
    #[arg(long, value_name = "N", requires = "subscription_operations_ms", value_parser = clap::value_parser!(u64).range(1..))]
    pub failed_operations_every: Option<u64>,
    /// Refuse (400) a subscription whose booking number does not match this regex whole,
    /// e.g. `[A-Z]{2}[0-9]{8}`.
    #[arg(long, value_name = "REGEX")]
    pub booking_number_pattern: Option<String>,
    /// Unused quotes held at most; beyond it the oldest expire, as any unused quote does 72 h
    /// after it was made (by the sandbox's clock). Keeps a long-lived sandbox's memory bounded.
    #[arg(long, default_value_t = crate::sandbox::DEFAULT_MAX_OPEN_QUOTES, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=10_000_000).map(|n| n as usize))]
    pub max_quotes: usize,
    /// Bookings held at most; beyond it the oldest are forgotten with their contracts and
    /// claims (and answer 404 from then on), as are used or deleted quotes beyond four times
    /// as many. Keeps a long-lived sandbox's memory bounded.
    #[arg(long, default_value_t = crate::sandbox::DEFAULT_MAX_BOOKINGS, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=10_000_000).map(|n| n as usize))]
    pub max_bookings: usize,
    /// Which document's request shapes to enforce: `spec` or `provider-docs` (customer,
    /// birthday, the documented flight-status call).
    #[arg(long, default_value = "spec", value_parser = clap::builder::PossibleValuesParser::new(["spec", "provider-docs"]).map(|s| crate::dialect::Builtin::named(&s).map_or(crate::sandbox::ApiDialect::Spec, crate::dialect::Builtin::enforced)))]
    pub dialect: ApiDialect,
    /// Answer quotes one entry per bundle, as the provider documents: `{"data": [...]}`,
    /// each entry with its own id, reference, price and T&C `documents` (e.g. Silver,Gold).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub quote_bundles: Vec<String>,
    /// Deliver webhooks (contract.created, claim.updated) to this URL, signed with the secret
    /// from --webhook-secret-file or $PPCERT_WEBHOOK_SECRET. Failed deliveries are retried
    /// after 1, 2, 4, 8 and 16 s; each attempt is logged on stderr.
    #[arg(long, value_name = "URL", value_parser = webhook_url)]
    pub webhook_url: Option<url::Url>,
    /// File holding the webhook secret (else $PPCERT_WEBHOOK_SECRET); never a plain flag.
    #[arg(long, value_name = "PATH", requires = "webhook_url")]
    pub webhook_secret_file: Option<PathBuf>,
    /// How deliveries are signed: provider-docs (Koala-Signature), standard-webhooks, github.
    #[arg(long, default_value = "provider-docs", value_parser = scheme_parser())]
    pub webhook_scheme: Scheme,
    #[command(flatten)]
    pub listen_limits: ListenArgs,
    #[command(flatten)]
    pub transport: ServeTransportArgs,
    #[command(flatten)]
    pub quirks: ServeQuirksArgs,
    #[command(flatten)]
    pub wire: ServeWireArgs,
}

/// The webhook signature schemes by name.
fn scheme_parser() -> impl clap::builder::TypedValueParser<Value = Scheme> {
    clap::builder::PossibleValuesParser::new(["provider-docs", "standard-webhooks", "github"])
        .map(|name| Scheme::parse(&name).unwrap_or(Scheme::ProviderDocs))
}

/// When to color output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

/// How `ppcert serve` can be reached: compression, required headers, HTTPS, client certificates.
#[derive(Debug, Args, Clone, Default)]
pub struct ServeTransportArgs {
    /// Answer with gzip when the client's Accept-Encoding allows it.
    #[arg(long)]
    pub gzip: bool,
    /// A header every API call must carry, `NAME: VALUE` (repeatable): without it the answer
    /// is 400 "this API needs the header …", or 401 "missing gateway key" when NAME says key.
    #[arg(long, value_name = "NAME: VALUE", value_parser = crate::sandbox::parse_header)]
    pub require_header: Vec<(String, String)>,
    /// Serve HTTPS with this certificate chain (PEM); needs --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Require a client certificate signed by this CA (PEM); needs --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub client_ca: Option<PathBuf>,
}

/// How `ppcert serve` wants to be called beyond request shapes: trailing slashes, UTC
/// instants, a `PUT` flight-status call.
#[derive(Debug, Args, Clone, Default)]
pub struct ServeQuirksArgs {
    /// Serve every API route only with a trailing slash (/quotes/, /quotes/{id}/); the bare
    /// path answers 308 Permanent Redirect to the slashed one.
    #[arg(long)]
    pub trailing_slash: bool,
    /// Refuse (400, naming the field) any date-time in a request body that is not a UTC
    /// instant ending in Z (2027-03-14T07:30:00Z; +02:00 is refused).
    #[arg(long)]
    pub utc_only: bool,
    /// Take the flight-cancellation report as PUT /bookings/{bookingNumber}/flight-status
    /// with {"data": {"airlineIata", "number", "departureDate", "status": "CANCELLED"}}
    /// (answered 200) instead of the dialect's call.
    #[arg(long)]
    pub flight_status_put: bool,
}

/// Request encodings `ppcert serve` can require, each alone or together.
#[derive(Debug, Args, Clone, Default)]
pub struct ServeWireArgs {
    /// Take every JSON request body only as TYPE (415 otherwise), only from clients whose
    /// Accept admits it (406 otherwise), and answer JSON as TYPE. application/vnd.api+json
    /// also wants JSON:API documents, {"data": {"type": ..., "attributes": {...}}}, and
    /// answers with them.
    #[arg(long, value_name = "TYPE", value_parser = media_type)]
    pub media_type: Option<String>,
    /// Take PATCH /subscriptions/{bookingNumber} as a JSON Patch (RFC 6902,
    /// application/json-patch+json) over the subscription {bookingNumber, quotes, client}.
    #[arg(long)]
    pub json_patch_updates: bool,
    /// Take claims as multipart/form-data: a part named claim (the claim, as --media-type if
    /// given) and a part named document that is a PDF (application/pdf).
    #[arg(long)]
    pub multipart_claims: bool,
}

/// A media type as `--media-type` takes it: `type/subtype`, parameters allowed.
fn media_type(text: &str) -> Result<String, String> {
    let essence = text.split(';').next().unwrap_or("").trim();
    let valid = essence
        .split_once('/')
        .is_some_and(|(t, s)| !t.is_empty() && !s.is_empty())
        && axum::http::HeaderValue::from_str(text).is_ok();
    match valid {
        true => Ok(text.trim().to_string()),
        false => Err(format!("`{text}` is not a media type (type/subtype)")),
    }
}
