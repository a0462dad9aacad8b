//! `--resume` as a layer of the merge: what the interrupted run recorded fills what the new
//! invocation leaves out, and anything it says otherwise is refused, before the config is
//! validated, so a resumed run is held to the same bounds as a fresh one.

use std::num::NonZeroU32;
use std::path::Path;

use super::auth::TokenSource;
use super::error::{ConfigError, ResumeError};
use super::target::{Environment, Target, Upstream, parse_base_url};
use crate::scenario::{self, LoadedScenario, ScenarioSource};
#[cfg(test)]
use crate::secret::Secret;

/// What an interrupted run's journal says it was.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Recorded {
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

impl Recorded {
    /// What the merge holds the resumed invocation to: the interrupted run's own record.
    pub(crate) fn of(
        previous: &crate::evidence::resume::Previous,
        dir: &Path,
    ) -> Result<Recorded, ResumeError> {
        let run = &previous.run;
        let scale = NonZeroU32::new(run.scale).ok_or_else(|| ResumeError::ScaleZero {
            dir: dir.to_path_buf(),
        })?;
        Ok(Recorded {
            scenario_source: ScenarioSource::parse(&run.scenario_source),
            scenario_sha256: run.scenario_sha256.clone(),
            base_url: run.target.base_url.clone(),
            environment: run.target.environment,
            token_fingerprint: run.token_fingerprint.clone(),
            token_source: run.token_source.clone(),
            scale,
            flight_seller: run.partner.flight_seller,
            dialect: run.dialect.clone(),
            seed: run.seed,
        })
    }
}

/// The recorded scenario, loaded again (scenarios are looked up from `dir`) and unchanged.
/// `--scenario` may only name it again, however spelled: judged by its text, not its name.
pub(super) fn scenario(
    recorded: &Recorded,
    asked: Option<&str>,
    dir: &Path,
) -> Result<LoadedScenario, ConfigError> {
    let name = recorded.scenario_source.name_or_path();
    let scenario = match asked {
        Some(asked) => {
            let asked_for = scenario::resolve(asked, dir).map_err(ConfigError::Scenario)?;
            if asked_for.sha256 != recorded.scenario_sha256 {
                let (ran, asked) = (name.to_string(), asked.to_string());
                return Err(ResumeError::OtherScenario { ran, asked }.into());
            }
            asked_for
        }
        // A built-in is the one in this binary, whatever a local scenarios/ directory holds.
        None => match &recorded.scenario_source {
            ScenarioSource::BuiltIn(name) => scenario::builtin_named(name),
            ScenarioSource::File(path) => scenario::resolve(path, dir),
            ScenarioSource::Proxy => return Err(ResumeError::ProxyTraffic.into()),
        }
        .map_err(ConfigError::Scenario)?,
    };
    if scenario.sha256 != recorded.scenario_sha256 {
        return Err(ResumeError::ScenarioChanged {
            name: name.to_string(),
            then: recorded.scenario_sha256.clone(),
            now: scenario.sha256,
        }
        .into());
    }
    Ok(scenario)
}

/// The recorded target when none is given; another one is refused, as is another environment
/// given by `--environment` (a config file's environment gives way to the recorded one).
pub(super) fn upstream(
    given: Upstream,
    explicit_environment: Option<Environment>,
    recorded: &Recorded,
) -> Result<Upstream, ConfigError> {
    let base_url = match given {
        Target::Embedded => parse_base_url(&recorded.base_url)?,
        Target::Remote { base_url, .. } => {
            let same =
                base_url.as_str().trim_end_matches('/') == recorded.base_url.trim_end_matches('/');
            if !same {
                let then = recorded.base_url.clone();
                return Err(ResumeError::OtherTarget {
                    then,
                    now: base_url,
                }
                .into());
            }
            base_url
        }
    };
    if let Some(now) = explicit_environment.filter(|e| *e != recorded.environment) {
        let then = recorded.environment;
        return Err(ResumeError::OtherEnvironment { then, now }.into());
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
pub(super) fn check_token(
    source: Option<&TokenSource>,
    recorded: &Recorded,
) -> Result<Option<String>, ResumeError> {
    let Some(source) = source else {
        return Err(ResumeError::NoToken);
    };
    let now = source.describe();
    if let Some(then) = &recorded.token_source
        && *then != now
    {
        let then = then.clone();
        return Err(ResumeError::OtherTokenSource { then, now });
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
pub(super) fn scale(asked: Option<u32>, recorded: &Recorded) -> Result<NonZeroU32, ResumeError> {
    match asked {
        Some(now) if now != recorded.scale.get() => Err(ResumeError::OtherScale {
            then: recorded.scale,
            now,
        }),
        _ => Ok(recorded.scale),
    }
}

/// What else shapes the requests: the flows planned (flight seller or not), the dialect they
/// are spelled in, and the data they carry (the seed). The merged values must be the
/// recorded ones, or the flows not yet run would send something else.
pub(super) fn check_shape(
    recorded: &Recorded,
    flight_seller: bool,
    dialect: &str,
    seed: Option<u64>,
) -> Result<(), ResumeError> {
    if flight_seller != recorded.flight_seller {
        let then = recorded.flight_seller;
        return Err(ResumeError::OtherFlightSeller { then });
    }
    if dialect != recorded.dialect {
        return Err(ResumeError::OtherDialect {
            then: recorded.dialect.clone(),
            now: dialect.to_string(),
        });
    }
    match seed {
        Some(now) if now != recorded.seed => Err(ResumeError::OtherSeed {
            then: recorded.seed,
            now,
        }),
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
        assert!(matches!(
            other,
            ConfigError::Resume(ResumeError::OtherTarget { .. })
        ));
        assert!(
            other.to_string().contains("not https://other.example/"),
            "{other}"
        );
        let production = upstream(Target::Embedded, Some(Environment::Production), &run);
        assert!(matches!(
            production,
            Err(ConfigError::Resume(ResumeError::OtherEnvironment {
                then: Environment::Staging,
                now: Environment::Production
            }))
        ));
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
        assert!(matches!(check_token(Some(&same), &run), Ok(None)));
        assert!(matches!(check_token(None, &run), Err(ResumeError::NoToken)));
        let other = TokenSource::from(Secret::new("other"));
        let note = check_token(Some(&other), &run).unwrap().unwrap();
        assert!(note.contains("another token"), "{note}");
        let by_command =
            TokenSource::Command(vec!["vault".into()], std::time::Duration::from_secs(1));
        let elsewhere = check_token(Some(&by_command), &run).unwrap_err();
        assert!(matches!(elsewhere, ResumeError::OtherTokenSource { .. }));
        assert!(
            elsewhere.to_string().contains("not token command vault"),
            "{elsewhere}"
        );
        assert_eq!(scale(None, &run).unwrap().get(), 3);
        assert_eq!(scale(Some(3), &run).unwrap().get(), 3);
        // An explicit --scale 1 is a different run, not "unset".
        let other = scale(Some(1), &run).unwrap_err();
        assert!(matches!(other, ResumeError::OtherScale { now: 1, .. }));
        assert!(other.to_string().contains("--scale 3, not 1"), "{other}");
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
        assert!(other.to_string().contains("not `certification`"), "{other}");
        let changed = Recorded {
            scenario_sha256: "0".repeat(64),
            ..run
        };
        let error = scenario(&changed, None, dir.path()).unwrap_err();
        assert!(matches!(
            error,
            ConfigError::Resume(ResumeError::ScenarioChanged { .. })
        ));
        assert!(error.to_string().contains("changed since"), "{error}");
    }

    #[test]
    fn flights_dialect_and_seed_must_be_the_recorded_ones() {
        let run = recorded();
        assert!(check_shape(&run, true, "spec", None).is_ok());
        assert!(check_shape(&run, true, "spec", Some(7)).is_ok());
        let seller = check_shape(&run, false, "spec", None).unwrap_err();
        assert!(matches!(
            seller,
            ResumeError::OtherFlightSeller { then: true }
        ));
        assert!(seller.to_string().contains("does sell flights"), "{seller}");
        let dialect = check_shape(&run, true, "provider-docs", None).unwrap_err();
        assert!(
            dialect.to_string().contains("`spec`, not `provider-docs`"),
            "{dialect}"
        );
        let seed = check_shape(&run, true, "spec", Some(8)).unwrap_err();
        assert!(matches!(seed, ResumeError::OtherSeed { then: 7, now: 8 }));
        assert!(seed.to_string().contains("seed is 7, not 8"), "{seed}");
    }
}
