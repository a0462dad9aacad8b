//! `--resume` as a layer of the merge: what the interrupted run recorded fills what the new
//! invocation leaves out, and anything it says otherwise is refused, before the config is
//! validated, so a resumed run is held to the same bounds as a fresh one.

use std::num::NonZeroU32;
use std::path::Path;

use super::auth::TokenSource;
use super::target::{Environment, Target, Upstream, parse_base_url};
use crate::scenario::{self, LoadedScenario, ScenarioSource};
#[cfg(test)]
use crate::secret::Secret;

/// What an interrupted run's journal says it was.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    pub scenario_source: ScenarioSource,
    pub scenario_sha256: String,
    pub base_url: String,
    pub environment: Environment,
    pub token_fingerprint: String,
    /// Where the run's tokens came from (no token itself); absent in older journals.
    pub token_source: Option<String>,
    pub scale: NonZeroU32,
    pub flight_seller: bool,
    /// The dialect's name, as its file says.
    pub dialect: String,
    pub seed: u64,
}

/// The recorded scenario, loaded again (scenarios are looked up from `dir`) and unchanged.
/// `--scenario` may only name it again, however spelled: judged by its text, not its name.
pub fn scenario(
    recorded: &Recorded,
    asked: Option<&str>,
    dir: &Path,
) -> Result<LoadedScenario, String> {
    let name = recorded.scenario_source.name_or_path();
    let scenario = match asked {
        Some(asked) => {
            let asked_for = scenario::resolve(asked, dir).map_err(|e| e.to_string())?;
            if asked_for.sha256 != recorded.scenario_sha256 {
                return Err(format!(
                    "--resume: the run ran scenario `{name}`, not `{asked}`; leave --scenario out"
                ));
            }
            asked_for
        }
        // A built-in is the one in this binary, whatever a local scenarios/ directory holds.
        None => match &recorded.scenario_source {
            ScenarioSource::BuiltIn(name) => scenario::builtin_named(name),
            ScenarioSource::File(path) => scenario::resolve(path, dir),
            ScenarioSource::Proxy => {
                return Err("--resume: this bundle holds partner traffic recorded by ppcert proxy; there is no run to continue".into());
            }
        }
        .map_err(|e| e.to_string())?,
    };
    if scenario.sha256 != recorded.scenario_sha256 {
        return Err(format!(
            "--resume: scenario `{name}` changed since the run started (SHA-256 {} then, {} now)",
            recorded.scenario_sha256, scenario.sha256
        ));
    }
    Ok(scenario)
}

/// The recorded target when none is given; another one is refused, as is another environment
/// given by `--environment` (a config file's environment gives way to the recorded one).
pub fn upstream(
    given: Upstream,
    explicit_environment: Option<Environment>,
    recorded: &Recorded,
) -> Result<Upstream, String> {
    let base_url = match given {
        Target::Embedded => parse_base_url(&recorded.base_url)?,
        Target::Remote { base_url, .. } => {
            let same =
                base_url.as_str().trim_end_matches('/') == recorded.base_url.trim_end_matches('/');
            if !same {
                return Err(format!(
                    "--resume: the run was against {}, not {base_url}; resume it against its own target (leave out --base-url, PPCERT_BASE_URL and [target] base_url, or give that URL)",
                    recorded.base_url
                ));
            }
            base_url
        }
    };
    if let Some(environment) = explicit_environment.filter(|e| *e != recorded.environment) {
        return Err(format!(
            "--resume: the run was against {}, not {}",
            recorded.environment.as_str(),
            environment.as_str()
        ));
    }
    Ok(Target::Remote {
        base_url,
        environment: recorded.environment,
        token: (),
    })
}

/// The run goes on with tokens from the source it started with (a fresh token is expected:
/// the one it started with may have expired). A static token that changed is accepted with a
/// note for the evidence; a different source is refused.
pub fn check_token(
    source: Option<&TokenSource>,
    recorded: &Recorded,
) -> Result<Option<String>, String> {
    let Some(source) = source else {
        return Err("--resume: the run needs its token again: set PPCERT_TOKEN, pass --token-file PATH or --token-command CMD, or configure [auth]".into());
    };
    let now = source.describe();
    if let Some(then) = &recorded.token_source
        && *then != now
    {
        return Err(format!(
            "--resume: the run took its tokens from {then}, not {now}; resume it with the same source"
        ));
    }
    Ok(match source {
        TokenSource::Static { token, .. } if token.fingerprint() != recorded.token_fingerprint => {
            Some(format!(
                "resumed with another token (fingerprint {}) than the run started with ({}), from the same source ({now})",
                token.fingerprint(),
                recorded.token_fingerprint
            ))
        }
        _ => None,
    })
}

/// The recorded scale, which `--scale` may only repeat.
pub fn scale(asked: Option<u32>, recorded: &Recorded) -> Result<NonZeroU32, String> {
    match asked {
        Some(asked) if asked != recorded.scale.get() => Err(format!(
            "--resume: the run started at --scale {}, not {asked}",
            recorded.scale
        )),
        _ => Ok(recorded.scale),
    }
}

/// What else shapes the requests: the flows planned (flight seller or not), the dialect they
/// are spelled in, and the data they carry (the seed). The merged values must be the
/// recorded ones, or the flows not yet run would send something else.
pub fn check_shape(
    recorded: &Recorded,
    flight_seller: bool,
    dialect: &str,
    seed: Option<u64>,
) -> Result<(), String> {
    if flight_seller != recorded.flight_seller {
        let was = if recorded.flight_seller { "" } else { "not " };
        return Err(format!(
            "--resume: the run was for a partner that does {was}sell flights; keep --no-flight-cancellations and [partner] flight_seller as they were"
        ));
    }
    if dialect != recorded.dialect {
        return Err(format!(
            "--resume: the run spoke dialect `{}`, not `{dialect}`; keep --dialect and [target] dialect as they were",
            recorded.dialect
        ));
    }
    match seed {
        Some(seed) if seed != recorded.seed => Err(format!(
            "--resume: the run's seed is {}, not {seed}; leave --seed out",
            recorded.seed
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An empty directory: scenarios resolve to the built-in ones, whatever the working
    /// directory holds.
    fn nowhere() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    fn recorded() -> Recorded {
        Recorded {
            scenario_source: ScenarioSource::BuiltIn("smoke"),
            scenario_sha256: scenario::resolve("smoke", nowhere().path()).unwrap().sha256,
            base_url: "https://staging.example/api".into(),
            environment: Environment::Staging,
            token_fingerprint: Secret::new("tok").fingerprint(),
            token_source: Some("static token (PPCERT_TOKEN)".into()),
            scale: NonZeroU32::new(3).unwrap(),
            flight_seller: true,
            dialect: "spec".into(),
            seed: 7,
        }
    }

    fn remote(url: &str) -> Upstream {
        Target::Remote {
            base_url: parse_base_url(url).unwrap(),
            environment: Environment::Staging,
            token: (),
        }
    }

    #[test]
    fn the_recorded_target_fills_in_and_another_is_refused() {
        let run = recorded();
        let filled = upstream(Target::Embedded, None, &run).unwrap();
        assert!(
            matches!(&filled, Target::Remote { base_url, .. } if base_url.as_str() == "https://staging.example/api")
        );
        assert!(upstream(remote("https://staging.example/api/"), None, &run).is_ok());
        let other = upstream(remote("https://other.example"), None, &run).unwrap_err();
        assert!(other.contains("not https://other.example/"), "{other}");
        let production = upstream(Target::Embedded, Some(Environment::Production), &run);
        assert!(production.unwrap_err().contains("not production"));
        // The URL given again keeps the recorded environment, production included.
        let in_production = Recorded {
            environment: Environment::Production,
            ..recorded()
        };
        let kept = upstream(remote("https://staging.example/api"), None, &in_production);
        assert_eq!(kept.unwrap().environment(), Environment::Production);
    }

    #[test]
    fn the_token_and_the_scale_must_be_the_recorded_ones() {
        let run = recorded();
        let same = TokenSource::from(Secret::new("tok"));
        assert_eq!(check_token(Some(&same), &run), Ok(None));
        assert!(
            check_token(None, &run)
                .unwrap_err()
                .contains("needs its token")
        );
        let other = TokenSource::from(Secret::new("other"));
        let note = check_token(Some(&other), &run).unwrap().unwrap();
        assert!(note.contains("another token"), "{note}");
        let by_command =
            TokenSource::Command(vec!["vault".into()], std::time::Duration::from_secs(1));
        let elsewhere = check_token(Some(&by_command), &run).unwrap_err();
        assert!(elsewhere.contains("not token command vault"), "{elsewhere}");
        assert_eq!(scale(None, &run).unwrap().get(), 3);
        assert_eq!(scale(Some(3), &run).unwrap().get(), 3);
        // An explicit --scale 1 is a different run, not "unset".
        assert!(
            scale(Some(1), &run)
                .unwrap_err()
                .contains("--scale 3, not 1")
        );
    }

    #[test]
    fn the_scenario_is_the_recorded_one_unchanged_however_named() {
        let run = recorded();
        let dir = nowhere();
        assert_eq!(
            scenario(&run, None, dir.path()).unwrap().scenario.name,
            "smoke"
        );
        assert!(scenario(&run, Some("smoke"), dir.path()).is_ok());
        // The same text by its path is the same scenario.
        let copy = dir.path().join("copy.toml");
        let text = crate::scenario::BUILTIN
            .iter()
            .find(|(name, _)| *name == "smoke")
            .unwrap()
            .1;
        std::fs::write(&copy, text).unwrap();
        assert!(scenario(&run, copy.to_str(), dir.path()).is_ok());
        // Resumed from another directory: the recorded relative path is not found there, the
        // same text named by another path is.
        let elsewhere = Recorded {
            scenario_source: ScenarioSource::File("./scenarios/mine.toml".into()),
            ..recorded()
        };
        assert!(scenario(&elsewhere, None, dir.path()).is_err());
        assert!(scenario(&elsewhere, copy.to_str(), dir.path()).is_ok());
        let other = scenario(&run, Some("certification"), dir.path()).unwrap_err();
        assert!(other.contains("not `certification`"), "{other}");
        let changed = Recorded {
            scenario_sha256: "0".repeat(64),
            ..run
        };
        let error = scenario(&changed, None, dir.path()).unwrap_err();
        assert!(error.contains("changed since"), "{error}");
    }

    #[test]
    fn flights_dialect_and_seed_must_be_the_recorded_ones() {
        let run = recorded();
        assert!(check_shape(&run, true, "spec", None).is_ok());
        assert!(check_shape(&run, true, "spec", Some(7)).is_ok());
        let seller = check_shape(&run, false, "spec", None).unwrap_err();
        assert!(seller.contains("does sell flights"), "{seller}");
        let dialect = check_shape(&run, true, "provider-docs", None).unwrap_err();
        assert!(dialect.contains("`spec`, not `provider-docs`"), "{dialect}");
        let seed = check_shape(&run, true, "spec", Some(8)).unwrap_err();
        assert!(seed.contains("seed is 7, not 8"), "{seed}");
    }
}
