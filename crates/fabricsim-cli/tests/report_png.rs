//! `report.html` as a reader sees it, rendered by headless Chromium to PNG.
//!
//! - Three scenarios run long enough to have results (incast-pfc cut to 10 ms as in the
//!   goldens, gse-vs-roce-quick whole, websearch-fattree cut to 2 ms): their reports
//!   open with the headline figure, a size sweep is on a log axis, reference lines are
//!   drawn, queues are per port and PFC pauses have a timeline; their pictures are charts,
//!   not blank pages (enough non-white pixels, many colours, the palette's first series
//!   colour).
//! - Every shipped scenario, cut to a few microseconds of simulated time: each report
//!   (the scenario's and its first run's) is well formed, every chart label is whole and
//!   inside its panel, a headline comes first when there is one, and the page renders
//!   to a picture that is not blank.
//!
//! The pictures are written next to the reports, in a temporary folder; with
//! `FABRICSIM_REPORT_PNG_DIR` set they are kept there instead, to look at.
//!
//! Skipped, with a message, when no Chromium is installed (`FABRICSIM_CHROMIUM` names
//! one elsewhere).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FABRICSIM_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

/// Renders `html` to `png` at 1200 px wide; false when Chromium fails or hangs.
fn screenshot(browser: &Path, html: &Path, png: &Path) -> bool {
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg("--window-size=1200,3000")
        .arg(format!("file://{}", html.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.success() && png.exists();
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// (width, height, RGB pixels) of a PNG.
fn decode(png: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let decoder = png::Decoder::new(std::fs::File::open(png).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.bit_depth, png::BitDepth::Eight, "8-bit screenshot");
    let step = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("unexpected PNG colour type {other:?}"),
    };
    let px = buf[..info.buffer_size()]
        .chunks_exact(step)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    (info.width, info.height, px)
}

/// The fraction of pixels that are not white.
fn ink(px: &[[u8; 3]]) -> f64 {
    let non_white = px.iter().filter(|p| p.iter().any(|&c| c < 235)).count();
    non_white as f64 / px.len() as f64
}

fn check_picture(png: &Path) {
    let (w, h, px) = decode(png);
    assert_eq!((w, h), (1200, 3000), "{}", png.display());
    let frac = ink(&px);
    // A headline chart and its text cover more than one per cent of a 1200 x 3000 page.
    assert!(
        frac > 0.01,
        "{}: only {frac:.4} of pixels not white",
        png.display()
    );
    let mut colours: Vec<[u8; 3]> = px.iter().map(|p| p.map(|c| c & 0xF0)).collect();
    colours.sort_unstable();
    colours.dedup();
    assert!(
        colours.len() > 20,
        "{}: {} colours",
        png.display(),
        colours.len()
    );
    // The first series colour (Okabe-Ito blue #0072B2) fills bars or draws lines.
    let blue = px
        .iter()
        .filter(|p| p[0] < 16 && (104..=124).contains(&p[1]) && (168..=188).contains(&p[2]))
        .count();
    assert!(
        blue > 500,
        "{}: {blue} pixels of series blue",
        png.display()
    );
}

/// The folder the runs go to: a temporary one, or `FABRICSIM_REPORT_PNG_DIR` (kept).
fn out_dir(name: &str) -> (Option<tempfile::TempDir>, PathBuf) {
    match std::env::var_os("FABRICSIM_REPORT_PNG_DIR") {
        Some(d) => {
            let p = PathBuf::from(d).join(name);
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).unwrap();
            (None, p)
        }
        None => {
            let t = tempfile::tempdir().unwrap();
            let p = t.path().to_path_buf();
            (Some(t), p)
        }
    }
}

fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

/// Runs `scenario` under `out` with `sets`; true when every run finished (exit 0), false
/// when some reached `max_time` (exit 1, the reports are written all the same).
fn run(scenario: &Path, sets: &[&str], out: &Path) -> bool {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fabricsim"));
    cmd.arg("run").arg(scenario).arg("--quiet");
    for s in sets {
        cmd.args(["--set", s]);
    }
    let o = cmd.arg("--out").arg(out).output().unwrap();
    let code = o.status.code();
    assert!(
        matches!(code, Some(0) | Some(1)),
        "{}: exit {code:?}\n{}",
        scenario.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    code == Some(0)
}

/// The `<figcaption class="title">` texts of the page's charts, in order.
fn figure_titles(html: &str) -> Vec<String> {
    html.split("<figcaption class=\"title\">")
        .skip(1)
        .map(|s| s[..s.find("</figcaption>").unwrap()].to_string())
        .collect()
}

/// The first `<figure>` of the page, whole.
fn first_figure(html: &str) -> String {
    let a = html.find("<figure").expect("a figure");
    // Plotters writes a text's content on a line of its own: `<text ...>\nname\n</text>`.
    html[a..a + html[a..].find("</figure>").unwrap()].replace('\n', "")
}

/// What every report must be: well formed, its labels whole and inside their panels,
/// and a headline (when it has one) its first figure, before any table.
fn check_structure(html_path: &Path) {
    let html = std::fs::read_to_string(html_path).unwrap();
    let name = html_path.display();
    if let Err(e) = fabricsim::base::charts::check_well_formed(&html) {
        panic!("{name}: not well formed: {e}");
    }
    if let Err(e) = fabricsim::base::charts::labels_fit(&html) {
        panic!("{name}: {e}");
    }
    let titles = figure_titles(&html);
    if let Some(h) = titles.iter().position(|t| t.starts_with("Headline")) {
        assert_eq!(h, 0, "{name}: the headline is figure {h}: {titles:?}");
        let figure = html.find("<figure").unwrap();
        for before in ["<table", "<details"] {
            assert!(
                html.find(before).is_none_or(|t| t > figure),
                "{name}: a {before} before the headline"
            );
        }
    }
}

fn browser_or_skip(test: &str) -> Option<PathBuf> {
    let b = chromium();
    if b.is_none() {
        eprintln!(
            "SKIPPED {test}: no Chromium found (/usr/bin/chromium; set FABRICSIM_CHROMIUM \
             to use another)"
        );
    }
    b
}

fn shoot(browser: &Path, html: &Path) -> PathBuf {
    let png = html.with_extension("png");
    assert!(
        screenshot(browser, html, &png),
        "chromium could not render {}",
        html.display()
    );
    png
}

#[test]
fn results_open_the_reports() {
    let Some(browser) = browser_or_skip("results_open_the_reports") else {
        return;
    };
    let (_keep, root) = out_dir("results");
    let sc = scenarios_dir();

    // gse-vs-roce-quick: a size sweep of two variants. The headline is the ratio of gse
    // to roce against size, on a log axis labelled with the swept sizes, a panel per
    // collective, the ratio 1 drawn.
    let gse = root.join("gse");
    assert!(run(&sc.join("gse-vs-roce-quick.toml"), &[], &gse));
    let html = std::fs::read_to_string(gse.join("report.html")).unwrap();
    check_structure(&gse.join("report.html"));
    let head = first_figure(&html);
    let html = html.replace('\n', "");
    assert!(
        head.contains("Headline: mean JCT relative to roce"),
        "{head:.300}"
    );
    assert!(head.contains("size (log scale)"));
    for size in ["1MiB", "4MiB", "16MiB"] {
        assert!(head.contains(&format!(">{size}</text>")), "tick {size}");
    }
    assert!(head.contains("roce (ratio 1)"));
    assert_eq!(head.matches("<svg").count(), 2, "a panel per collective");
    // The 16 per-point charts and 48-row tables are folded.
    assert!(html.contains("<summary>mean JCT (ms) and max JCT (ms) per sweep point (16 charts)"));
    assert!(html.contains("<summary>Runs (48 rows)</summary>"));
    check_picture(&shoot(&browser, &gse.join("report.html")));

    // websearch-fattree: flows under five algorithms at two loads. The headline overlays
    // every algorithm's slowdown per flow size, a panel per load, with the ideal.
    let ws = root.join("websearch");
    run(
        &sc.join("websearch-fattree.toml"),
        &["max_time=\"2ms\""],
        &ws,
    );
    let html = std::fs::read_to_string(ws.join("report.html")).unwrap();
    check_structure(&ws.join("report.html"));
    let head = first_figure(&html);
    assert!(head.contains("Headline: Slowdown p99 per flow size, every variant"));
    let panels: Vec<&str> = head.split("<svg").skip(1).collect();
    assert_eq!(panels.len(), 2, "a panel per load");
    for (p, load) in panels.iter().zip(["load = 0.3", "load = 0.5"]) {
        assert!(p.contains(load), "{load}");
        for v in ["dcqcn", "timely", "hpcc", "acc", "acc_no_halt"] {
            assert!(
                p.contains(&format!(">{v}</text>")),
                "{load}: {v} in the legend"
            );
        }
        assert!(p.contains("ideal (FCT = ideal FCT)"));
    }
    check_picture(&shoot(&browser, &ws.join("report.html")));

    // incast-pfc: one flow size, three variants, no sweep. Headline: slowdown bars per
    // run with the ideal; goodput bars per variant with the line rate; a run's report
    // has its queues per port in KB and the PFC pause timeline.
    let inc = root.join("incast");
    run(&sc.join("incast-pfc.toml"), &["max_time=\"10ms\""], &inc);
    let html = std::fs::read_to_string(inc.join("report.html")).unwrap();
    check_structure(&inc.join("report.html"));
    let head = first_figure(&html);
    let html = html.replace('\n', "");
    assert!(head.contains("Headline: slowdown of the &gt;=1MB flows, every run"));
    assert!(head.contains("ideal (FCT = ideal FCT)"));
    // "run" only as the headline's axis description, never as a category of bars.
    assert_eq!(
        html.matches(">run</text>").count(),
        1,
        "no category \"run\""
    );
    assert!(
        html.contains("line rate (100 Gbps)"),
        "goodput against the line rate"
    );
    assert!(
        !html.contains(">&lt;10KB</text>"),
        "no empty size bucket on a chart"
    );
    let one = inc.join("pfc_dcqcn").join("report.html");
    check_structure(&one);
    let html = std::fs::read_to_string(&one).unwrap().replace('\n', "");
    let titles = figure_titles(&html);
    assert!(titles[0].starts_with("Headline"), "{titles:?}");
    assert!(
        titles.iter().any(|t| t.starts_with("PFC pause timeline")),
        "{titles:?}"
    );
    assert!(titles
        .iter()
        .any(|t| t.starts_with("Switch egress queue per port")));
    assert!(html.contains("queue (KB)"));
    for html in [inc.join("report.html"), one] {
        check_picture(&shoot(&browser, &html));
    }
}

#[test]
fn every_shipped_report_renders() {
    let Some(browser) = browser_or_skip("every_shipped_report_renders") else {
        return;
    };
    let (_keep, root) = out_dir("shipped");
    let mut files: Vec<PathBuf> = std::fs::read_dir(scenarios_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 30, "{} scenarios", files.len());
    for f in &files {
        let name = f.file_stem().unwrap().to_str().unwrap();
        let out = root.join(name);
        // A few microseconds: every part of the scenario is built and the reports are
        // written; what they show is cut short.
        run(f, &["max_time=\"20us\""], &out);
        let mut pages = vec![out.join("report.html")];
        // The first run's own report, when the scenario has several runs.
        let mut runs: Vec<PathBuf> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.join("report.html").exists())
            .collect();
        runs.sort();
        pages.extend(runs.first().map(|r| r.join("report.html")));
        for page in &pages {
            assert!(page.exists(), "{}", page.display());
            check_structure(page);
        }
        let (_, _, px) = decode(&shoot(&browser, &pages[0]));
        assert!(ink(&px) > 0.005, "{name}: a blank page");
    }
}
