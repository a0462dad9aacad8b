//! Rendering the reports from the evidence (HTML, Markdown, JUnit) and writing the bundle's files.

use super::files::write_atomic_hashed;
use super::pass::Pass;
use super::prerender::Rendered;
use super::{junit, junit_listed, manifest, view};
use crate::formats::{Format, MARKDOWN};
use std::io::Write;
use std::path::Path;

use super::environment::ENVIRONMENT;

use crate::evidence::{self, Evidence};

fn render_template<'a>(
    name: &str,
    evidence: &'a Evidence,
    pass: &'a Pass<'a>,
    exchanges: view::Exchanges<'a>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let template = ENVIRONMENT
        .get_template(name)
        .map_err(std::io::Error::other)?;
    let view = view::build(evidence, pass, exchanges);
    template
        .render_captured_to(minijinja::Value::from(minijinja::value::Serde(&view)), out)
        .map(|_| ())
        .map_err(|e| std::io::Error::other(format!("{name}: {e:#}")))
}

/// Writes one report; `pass` is the record's exchanges as the HTML and Markdown reports read
/// them (JUnit needs none).
fn render_with(
    format: Format,
    evidence: &Evidence,
    pass: Option<&Pass<'_>>,
    rendered: Option<&Rendered>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let (template, exchanges) = match format {
        Format::Html => ("report.html.j2", view::Exchanges::Shown(rendered)),
        Format::Md => ("report.md.j2", view::Exchanges::None),
        Format::Junit if view::partner_traffic(evidence) => {
            return junit::write(evidence, &junit_listed::suites(evidence)?, out);
        }
        Format::Junit => return junit::render(evidence, out),
        Format::Ctrf => return super::ctrf::write(evidence, out),
    };
    let pass = pass.ok_or_else(|| std::io::Error::other("no pass over the exchanges"))?;
    render_template(template, evidence, pass, exchanges, out)
}

/// Renders `formats` into `dir` and refreshes the manifest. The exchanges are read once for
/// all of them: a record left in the journal is read from disk.
pub(crate) fn write_reports(
    dir: &Path,
    evidence: &Evidence,
    formats: &[Format],
) -> std::io::Result<()> {
    write_files(dir, evidence, formats, None, None, None)
}

/// How `evidence.json` is written: from memory when every exchange there is whole, else with
/// each exchange read back from the journal.
#[derive(Clone, Copy)]
enum Record {
    FromMemory,
    Streamed,
}

/// Writes `evidence.json` (when `record` says how), `formats` and the manifest last. They
/// read the same record and write their own file: the HTML report, the slowest to render, on
/// a thread of its own, the rest in turn beside it, then the files already there (the journal)
/// hashed; what is written is hashed as it is written. The end waits for about the HTML
/// report alone.
fn write_files(
    dir: &Path,
    evidence: &Evidence,
    formats: &[Format],
    record: Option<Record>,
    rendered: Option<&Rendered>,
    hashed: Option<(&str, String)>,
) -> std::io::Result<()> {
    let mut leaving: Vec<&str> = formats.iter().map(|f| f.file_name()).collect();
    leaving.extend(record.map(|_| evidence::FILE_NAME));
    // Listed before anything is written beside them: a file renamed while the directory is
    // read would fail the listing.
    let mut settled = manifest::settled(dir, &leaving)?;
    settled.retain(|name| hashed.as_ref().is_none_or(|(hashed, _)| name != hashed));
    let templated = (formats.iter()).any(|f| matches!(f, Format::Html | Format::Md));
    let pass = if templated {
        Some(Pass::of(evidence)?)
    } else {
        None
    };
    let pass = pass.as_ref();
    let known = std::thread::scope(|scope| {
        let html = (formats.contains(&Format::Html)).then(|| {
            scope.spawn(move || write_report(dir, Format::Html, evidence, pass, rendered))
        });
        let mut known = manifest::Known::new();
        if let Some(how) = record {
            known.insert(
                evidence::FILE_NAME.to_string(),
                write_record(dir, evidence, how)?,
            );
        }
        for format in formats.iter().filter(|f| **f != Format::Html) {
            let digest = write_report(dir, *format, evidence, pass, None)?;
            known.insert(format.file_name().to_string(), digest);
        }
        known.extend(manifest::digests_of(dir, &settled)?);
        known.extend(hashed.map(|(name, digest)| (name.to_string(), digest)));
        if let Some(html) = html {
            known.insert(Format::Html.file_name().to_string(), joined(html)?);
        }
        Ok::<_, std::io::Error>(known)
    })?;
    manifest::write_known(dir, &known)
}

/// Writes one report; its digest.
fn write_report(
    dir: &Path,
    format: Format,
    evidence: &Evidence,
    pass: Option<&Pass<'_>>,
    rendered: Option<&Rendered>,
) -> std::io::Result<String> {
    write_atomic_hashed(&dir.join(format.file_name()), |out| {
        render_with(format, evidence, pass, rendered, out)
    })
}

/// A thread's result, its panic carried on.
fn joined<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Writes `evidence.json`; its digest.
fn write_record(dir: &Path, evidence: &Evidence, how: Record) -> std::io::Result<String> {
    write_atomic_hashed(&dir.join(evidence::FILE_NAME), |out| {
        match (how, &evidence.archive) {
            (Record::Streamed, Some(archive)) => {
                serde_json::to_writer_pretty(out, &evidence::stream::Streamed { evidence, archive })
            }
            _ => serde_json::to_writer_pretty(out, evidence),
        }
        .map_err(std::io::Error::other)
    })
}

/// Writes `evidence.json`, every report and the manifest into `dir`. A run's own record keeps
/// its exchanges slim (a small run's whole): those a report shows are put back whole from the
/// journal first, and when every exchange in memory is then whole (a small run, where nothing
/// is read back) evidence.json is written from memory; otherwise it reads each exchange whole
/// from the journal. A record left in the journal is read from there. `journal`: a file of the
/// bundle whose digest was taken as it was written (the run's journal), not read back.
pub(crate) fn write_bundle(
    dir: &Path,
    evidence: &mut Evidence,
    formats: &[Format],
    rendered: Option<&Rendered>,
    journal: Option<(&str, String)>,
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let all_whole = if evidence.in_journal.is_none() {
        let mut wanted = view::shown(evidence);
        wanted.extend(junit::quoted(evidence));
        evidence::stream::hydrate(evidence, &wanted)?
    } else {
        false
    };
    let record = if all_whole {
        Record::FromMemory
    } else {
        Record::Streamed
    };
    write_files(dir, evidence, formats, Some(record), rendered, journal)
}

/// Appends the Markdown report to `$GITHUB_STEP_SUMMARY` when that is set.
pub(crate) fn append_step_summary(dir: &Path) -> std::io::Result<()> {
    let Some(summary) = crate::env::step_summary() else {
        return Ok(());
    };
    let Ok(markdown) = std::fs::read(dir.join(MARKDOWN)) else {
        return Ok(()); // --format left the Markdown report out
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(summary)?;
    std::io::Write::write_all(&mut file, &markdown)
}

#[cfg(test)]
mod tests {
    use crate::report::environment::{ENVIRONMENT, md};

    /// A body's pretty text kept in the view (a small run's) and one the template
    /// pretty-prints as it writes it (past the budget) read the same, and mixed as well.
    #[test]
    fn bodies_kept_pretty_or_printed_by_the_template_read_the_same() {
        let run = crate::evidence::test_run();
        let exchanges = (1..=3)
            .map(|seq| {
                let mut x = crate::journal::test_exchange();
                x.seq = seq;
                x
            })
            .collect();
        let mut evidence = crate::evidence::build(run, &[], exchanges, Vec::new(), &[], Vec::new());
        evidence.flows.push(crate::evidence::FlowSummary {
            label: "lifecycle#1".into(),
            flow: "lifecycle".into(),
            status: crate::record::FlowStatus::Failed,
            reason: None,
        });
        let pass = super::Pass::of(&evidence).unwrap();
        let render = |kept: usize| {
            let shown = super::view::Exchanges::Shown(None);
            let view = super::view::build_keeping(&evidence, &pass, shown, kept);
            let template = ENVIRONMENT.get_template("report.html.j2").unwrap();
            template.render(minijinja::value::Serde(&view)).unwrap()
        };
        let kept = render(super::view::PRETTY_KEPT);
        assert!(
            kept.contains("&quot;a&quot;: ["),
            "the request body, pretty"
        );
        assert!(
            kept.contains("&lt;html&gt;bad gateway"),
            "the answer's text"
        );
        for budget in [0, 40] {
            assert_eq!(render(budget), kept, "kept at most {budget} bytes");
        }
    }

    /// A small run's record kept whole is written from memory, with the exchange blocks of
    /// report.html rendered while it ran; the same record kept slim is read back from the
    /// journal and renders every block at the end: the two bundles' evidence.json and reports
    /// are the same bytes.
    #[test]
    fn a_record_kept_whole_writes_the_same_bundle_as_one_read_back() {
        use crate::evidence::collect::Recording;
        let write = |whole: bool| {
            let dir = tempfile::tempdir().unwrap();
            let journal = crate::journal::Journal::open(dir.path(), false).unwrap();
            let prerender = whole.then(|| super::super::prerender::Prerender::start().unwrap());
            let others = (prerender.iter())
                .map(|p| p.clone() as std::sync::Arc<dyn crate::engine::Subscriber>)
                .collect();
            let recording = Recording::new(journal, Vec::new(), Vec::new(), others);
            let recording = if whole {
                recording.keeping_whole()
            } else {
                recording
            };
            for _ in 0..3 {
                let exchange = Box::new(crate::journal::test_exchange());
                recording
                    .events
                    .emit(crate::engine::RunEvent::ExchangeFinished(exchange));
            }
            let recorded = recording.take();
            let rendered = prerender.map(|p| p.finish_all());
            let blocks = rendered
                .as_ref()
                .map_or(0, |r| (1..=3).filter_map(|s| r.block(s)).count());
            let kept = (recorded.archive.as_ref().unwrap().kept_whole.len(), blocks);
            let run = crate::evidence::test_run();
            let mut evidence = recorded.into_evidence(run, &[], &[], Vec::new());
            let formats = [super::Format::Html, super::Format::Md, super::Format::Junit];
            super::write_bundle(dir.path(), &mut evidence, &formats, rendered.as_ref(), None)
                .unwrap();
            let read = |name: &str| std::fs::read(dir.path().join(name)).unwrap();
            let files = ["evidence.json", "report.html", "report.md", "junit.xml"].map(read);
            (kept, files, dir)
        };
        let (kept_whole, whole, _a) = write(true);
        let (kept_slim, slim, _b) = write(false);
        assert_eq!(
            kept_whole,
            (3, 3),
            "kept whole, every block rendered as it ran"
        );
        assert_eq!(
            kept_slim,
            (0, 0),
            "kept slim, no block rendered before the end"
        );
        for (name, (a, b)) in ["evidence.json", "report.html", "report.md", "junit.xml"]
            .iter()
            .zip(whole.iter().zip(slim.iter()))
        {
            assert!(a == b, "{name} differs");
        }
        let evidence = String::from_utf8(whole[0].clone()).unwrap();
        assert!(
            evidence.contains("application/JSON"),
            "whole exchanges: {evidence}"
        );
    }

    #[test]
    fn server_text_cannot_break_out_of_a_markdown_table_or_code_span() {
        assert_eq!(
            md("a|b\n<!-- hide -->`x`".into()),
            "a\\|b &lt;!-- hide --&gt;'x'"
        );
    }
}
