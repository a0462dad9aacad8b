//! The reports' templates in one minijinja environment, compiled once per process, and the
//! filters they use.

use minijinja::{Environment, UndefinedBehavior};

/// Markdown table cells: no pipe or line break may escape the cell.
/// A server's text made inert in Markdown: on one line, no table cell break, no HTML (a
/// comment would hide the rest of the job summary), no way out of a code span.
pub(crate) fn md(value: String) -> String {
    value
        .replace(['\r', '\n'], " ")
        .replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('`', "'")
}

/// The reports' templates, compiled once per process, on first use or by [`warm`]: they were
/// compiled again for each report (both for each), a third of writing a default batch's bundle.
pub(super) static ENVIRONMENT: std::sync::LazyLock<Environment<'static>> =
    std::sync::LazyLock::new(environment);

/// Compiles the reports' templates now: a run calls it on a blocking thread while its first
/// requests are in flight, so that its end only renders.
pub(crate) fn warm() {
    std::sync::LazyLock::force(&ENVIRONMENT);
}

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.add_filter("md", md);
    // Money as money: `74.90`, not `74.9`; minor units by currency (2 when unknown).
    env.add_filter("money", |amount: f64, currency: Option<String>| {
        crate::models::money::format(amount, currency.as_deref().unwrap_or("EUR"))
    });
    env.add_filter("pretty_body", |json: &str| {
        super::pretty::pretty_json(json, false)
            .0
            .unwrap_or_default()
    });
    env.add_template("report.html.j2", include_str!("templates/report.html.j2"))
        .expect("the HTML template parses");
    env.add_template("report.md.j2", include_str!("templates/report.md.j2"))
        .expect("the Markdown template parses");
    env.add_template(
        "exchange.html.j2",
        include_str!("templates/exchange.html.j2"),
    )
    .expect("the exchange block's template parses");
    env
}

/// One exchange's block of report.html, as the report would render it.
pub(super) fn render_block(
    detail: &super::exchange_view::ExchangeDetail<'_>,
) -> Result<String, minijinja::Error> {
    let template = ENVIRONMENT.get_template("exchange.html.j2")?;
    template.render(
        minijinja::context! { x => minijinja::Value::from(minijinja::value::Serde(detail)) },
    )
}
