//! `--resume` as a layer of the merge: what the interrupted run recorded fills what the new
//! invocation leaves out, and anything it says otherwise is refused, before the config is
//! validated, so a resumed run is held to the same bounds as a fresh one.

use std::num::NonZeroU32;
use std::path::Path;

use super::target::{Environment, Target, Upstream, parse_base_url};
use crate::scenario::{self, LoadedScenario, ScenarioSource};
use crate::secret::Secret;

/// What an interrupted run's journal says it was.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    pub scenario_source: String,
    pub scenario_sha256: String,
    pub base_url: String,
    pub environment: Environment,
    pub token_fingerprint: String,
    pub scale: NonZeroU32,
}

/// The recorded scenario, loaded again and unchanged; `--scenario` may only name it again.
pub fn scenario(recorded: &Recorded, asked: Option<&str>) -> Result<LoadedScenario, String> {
    let source = ScenarioSource::parse(&recorded.scenario_source);
    let name = source.name_or_path();
    if let Some(asked) = asked.filter(|asked| *asked != name) {
        return Err(format!(
            "--resume: the run ran scenario `{name}`, not `{asked}`; leave --scenario out"
        ));
    }
    let scenario = scenario::resolve(name, Path::new(".")).map_err(|e| e.to_string())?;
    if scenario.sha256 != recorded.scenario_sha256 {
        return Err(format!(
            "--resume: scenario `{name}` changed since the run started (SHA-256 {} then, {} now)",
            recorded.scenario_sha256, scenario.sha256
        ));
    }
    Ok(scenario)
}

/// The recorded target when none is given; another one is refused, as is another environment
/// given explicitly.
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
                    "--resume: the run was against {}, not {base_url}; resume it against its own target (leave --base-url out)",
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

/// The run goes on with the token it started with, judged by fingerprint.
pub fn check_token(token: Option<&Secret>, recorded: &Recorded) -> Result<(), String> {
    let Some(token) = token else {
        return Err(
            "--resume: the run needs its token again: set PPCERT_TOKEN or pass --token-file PATH"
                .into(),
        );
    };
    if token.fingerprint() != recorded.token_fingerprint {
        return Err(format!(
            "--resume: this token (fingerprint {}) is not the one the run started with ({})",
            token.fingerprint(),
            recorded.token_fingerprint
        ));
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded() -> Recorded {
        Recorded {
            scenario_source: "<built-in smoke>".into(),
            scenario_sha256: scenario::resolve("smoke", Path::new(".")).unwrap().sha256,
            base_url: "https://staging.example/api".into(),
            environment: Environment::Staging,
            token_fingerprint: Secret::new("tok").fingerprint(),
            scale: NonZeroU32::new(3).unwrap(),
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
    }

    #[test]
    fn the_token_and_the_scale_must_be_the_recorded_ones() {
        let run = recorded();
        assert!(check_token(Some(&Secret::new("tok")), &run).is_ok());
        assert!(
            check_token(None, &run)
                .unwrap_err()
                .contains("needs its token")
        );
        let other = check_token(Some(&Secret::new("other")), &run).unwrap_err();
        assert!(other.contains("not the one the run started with"));
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
    fn the_scenario_is_the_recorded_one_unchanged() {
        let run = recorded();
        assert_eq!(scenario(&run, None).unwrap().scenario.name, "smoke");
        assert!(scenario(&run, Some("smoke")).is_ok());
        let other = scenario(&run, Some("certification")).unwrap_err();
        assert!(other.contains("not `certification`"), "{other}");
        let changed = Recorded {
            scenario_sha256: "0".repeat(64),
            ..run
        };
        assert!(
            scenario(&changed, None)
                .unwrap_err()
                .contains("changed since")
        );
    }
}
