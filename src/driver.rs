//! The one driver: runs any [`TrainingLoop`] into a run folder with observers, checkpoints
//! after every committed iteration, the time budget and the other [`RunLimits`], resumption,
//! and the final report, meta-game, lineage and plots. It never asks which loop it runs.
//!
//! A run folder is written by one run at a time: the run holds [`LOCK_FILE`] while it
//! writes (created exclusively, holding its process id; removed when the run ends, however
//! it ends; a lock whose process is gone is taken over). Every file is written atomically
//! (a temporary file in the folder, then a rename), so a run killed at any moment leaves
//! complete files, each the old version or the new one; the temporary files of killed runs
//! are removed when the next run starts there.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fs::{self, OpenOptions};
use std::io::Write as _;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use metagame_populations::{
    Cutoff, IterationReport, RunLimits, StopReason, TrainingLoop, checkpoint, run_loop_with,
};
use serde::de::DeserializeOwned;

use crate::checkpoint_writer::CheckpointWriter;
use crate::config::ExperimentConfig;
use crate::error::{Error, Result};
use crate::history_log::{self, HISTORY_FILE, HistoryMark};
use crate::loops::Drive;
use crate::run_report::{CHECKPOINT_FILE, RunCheckpoint, RunReport};

/// Name of the report file in a run folder.
pub const REPORT_FILE: &str = "report.json";
/// Name of the final meta-game (Gambit .nfg) in a run folder.
pub const META_GAME_FILE: &str = "meta_game.nfg";
/// Name of the config file in a run folder (what `--resume DIR` reads).
pub(crate) const CONFIG_FILE: &str = "config.toml";
/// Name of the lock file a run holds in its folder while it writes there.
pub(crate) const LOCK_FILE: &str = ".metagame.lock";

/// Files a run writes besides its figures.
const RUN_FILES: &[&str] =
    &[CONFIG_FILE, CHECKPOINT_FILE, HISTORY_FILE, REPORT_FILE, META_GAME_FILE, "lineage.dot", "payoffs.bin"];
/// Extensions of the figures and pages a run writes.
const FIGURE_EXTENSIONS: &[&str] = &["svg", "png", "pdf", "html"];

/// Before a fresh run into a folder that holds a previous run (it has `config.toml`): remove
/// that run's files (its figures, report, meta-game, lineage, then its checkpoint, its history and last
/// its config, so that a folder cleared only in part still holds a run), so the folder never
/// mixes two runs. Other files are left alone.
fn clear_previous_run(dir: &Path) -> Result<()> {
    if !dir.join(CONFIG_FILE).is_file() {
        return Ok(());
    }
    let entries = fs::read_dir(dir).map_err(|e| output_err(dir, e))?;
    let mut doomed = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| output_err(dir, e))?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let figure =
            path.extension().and_then(|e| e.to_str()).is_some_and(|e| FIGURE_EXTENSIONS.contains(&e));
        if path.is_file() && (RUN_FILES.contains(&name) || figure) {
            doomed.push(path);
        }
    }
    let last = |p: &PathBuf| match p.file_name().and_then(|n| n.to_str()) {
        Some(CONFIG_FILE) => 3,
        Some(HISTORY_FILE) => 2,
        Some(CHECKPOINT_FILE) => 1,
        _ => 0,
    };
    doomed.sort_by_key(last);
    for path in doomed {
        fs::remove_file(&path).map_err(|e| output_err(&path, e))?;
    }
    Ok(())
}

/// Remove the temporary files of killed runs (`.<name>.tmp-<pid>`, see
/// [`checkpoint::temporary_path`], and locks set aside while taking one over) from `dir`. Called while holding the folder's lock, so no
/// other run is writing them.
fn remove_stale_temporaries(dir: &Path) -> Result<()> {
    let entries = fs::read_dir(dir).map_err(|e| output_err(dir, e))?;
    for entry in entries {
        let path = entry.map_err(|e| output_err(dir, e))?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let stale = checkpoint::temporary_file_pid(name).is_some_and(|pid| pid != std::process::id())
            || name.starts_with(&format!("{LOCK_FILE}.stale-"));
        if stale && path.is_file() {
            fs::remove_file(&path).map_err(|e| output_err(&path, e))?;
        }
    }
    Ok(())
}

/// This process's identity as a lock file holds it: `<pid> <start time>`, the start time as
/// the kernel counts it (Linux; empty elsewhere), so that a lock of a dead process whose pid
/// has been reused is still seen as stale.
fn lock_holder_text(pid: u32) -> String {
    format!("{pid} {}\n", process_start_time(pid).unwrap_or_default())
}

/// The start time of process `pid` (field 22 of `/proc/<pid>/stat`), where it can be read.
fn process_start_time(pid: u32) -> Option<String> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19).map(str::to_string)
}

/// Whether the process a lock names is alive: a process with that pid exists (and, where the
/// lock holds a start time, started then).
fn holder_alive(pid: u32, start: Option<&str>) -> bool {
    if pid == std::process::id() {
        return true;
    }
    if Path::new("/proc/self/stat").exists() {
        return match (process_start_time(pid), start) {
            (None, _) => false,
            (Some(now), Some(then)) => now == then,
            (Some(_), None) => true,
        };
    }
    #[cfg(unix)]
    {
        std::process::Command::new("kill")
            .args(["-0", &pid.to_string()])
            .stderr(std::process::Stdio::null())
            .status()
            .map_or(true, |s| s.success())
    }
    #[cfg(not(unix))]
    true
}

/// The lock of a run folder, held while a run writes there; the lock file is removed when
/// this is dropped (at the end of a run, on its error paths, and when a panic unwinds).
#[derive(Debug)]
struct RunLock {
    path: PathBuf,
    holder: String,
}

impl RunLock {
    /// How long a lock file may stay empty (its holder between creating and writing it)
    /// before it counts as left by a killed run.
    const EMPTY_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

    /// Take `dir`'s lock: create [`LOCK_FILE`] exclusively (`O_EXCL`) with this process's id,
    /// taking over a lock whose process is gone.
    ///
    /// # Errors
    ///
    /// [`Error::FolderInUse`] when a live process holds it; [`Error::Output`] for I/O errors.
    fn acquire(dir: &Path) -> Result<RunLock> {
        let path = dir.join(LOCK_FILE);
        let holder = lock_holder_text(std::process::id());
        let mut held_by = 0;
        for _ in 0..8 {
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut file) => {
                    let lock = RunLock { path: path.clone(), holder: holder.clone() };
                    file.write_all(holder.as_bytes())
                        .and_then(|()| file.sync_all())
                        .map_err(|e| output_err(&path, e))?;
                    return Ok(lock);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let Some(text) = read_lock(&path)? else { continue };
                    let mut fields = text.split_whitespace();
                    let pid = fields.next().and_then(|p| p.parse::<u32>().ok());
                    let stale = match pid {
                        Some(pid) => !holder_alive(pid, fields.next()),
                        // Empty or unreadable: being written, or left by a killed run.
                        None => fs::metadata(&path)
                            .and_then(|m| m.modified())
                            .ok()
                            .and_then(|t| t.elapsed().ok())
                            .is_some_and(|age| age > Self::EMPTY_GRACE),
                    };
                    held_by = pid.unwrap_or(0);
                    if !stale || !take_over(&path, &text)? {
                        break;
                    }
                }
                Err(e) => return Err(output_err(&path, e)),
            }
        }
        Err(Error::FolderInUse { dir: dir.into(), pid: held_by, lock: path })
    }
}

/// The text of a lock file; `None` when it vanished meanwhile.
fn read_lock(path: &Path) -> Result<Option<String>> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(output_err(path, e)),
    }
}

/// Remove a stale lock whose text was `text`: move it aside (atomically) and check that what
/// was moved is that lock and not one another run took meanwhile (which is put back).
/// Returns whether the stale lock is gone.
fn take_over(path: &Path, text: &str) -> Result<bool> {
    let aside = path.with_file_name(format!("{LOCK_FILE}.stale-{}", std::process::id()));
    match fs::rename(path, &aside) {
        Ok(()) => {}
        // Another run took it over first: try again.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(true),
        Err(e) => return Err(output_err(path, e)),
    }
    if read_lock(&aside)?.as_deref() == Some(text) {
        fs::remove_file(&aside).map_err(|e| output_err(&aside, e))?;
        return Ok(true);
    }
    // A live run's lock: put it back (if a third run has locked meanwhile, it keeps the
    // folder and this one gives up).
    if fs::hard_link(&aside, path).is_ok() {
        let _ = fs::remove_file(&aside);
    }
    Ok(false)
}

impl Drop for RunLock {
    fn drop(&mut self) {
        // Only our own lock: never one another run took over.
        if read_lock(&self.path).ok().flatten().as_deref() == Some(self.holder.as_str()) {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Where a run writes, whether it continues from a checkpoint, and what may interrupt it.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::AtomicBool;
/// use metagame::RunOptions;
///
/// let interrupted = Arc::new(AtomicBool::new(false)); // set it (e.g. on Ctrl-C) to stop
/// let options = RunOptions::new("runs/kuhn").resume(true).interrupt(interrupted);
/// assert!(options.resumes());
/// ```
#[derive(Clone, Debug)]
pub struct RunOptions {
    out_dir: PathBuf,
    resume: bool,
    durable: bool,
    lockstep: bool,
    interrupt: Option<Arc<AtomicBool>>,
    refresh_every: Option<Duration>,
    stop_after: Option<usize>,
}

/// How often a run folder's report and figures are refreshed during a run by default.
pub const REFRESH_EVERY: Duration = Duration::from_secs(60);

impl RunOptions {
    /// A fresh run into `out_dir`, the run folder (created if missing, once the run can
    /// start). A fresh run replaces the files of a previous run there (see the CLI's
    /// `--overwrite`); other files stay. A run into a folder that another run is writing
    /// fails ([`Error::FolderInUse`]).
    pub fn new(out_dir: impl Into<PathBuf>) -> Self {
        RunOptions {
            out_dir: out_dir.into(),
            resume: false,
            durable: false,
            lockstep: false,
            interrupt: None,
            refresh_every: Some(REFRESH_EVERY),
            stop_after: None,
        }
    }

    /// Continue from `out_dir/checkpoint.json` instead of starting afresh (`true`). A folder
    /// whose run stopped before its first checkpoint (it holds the same run's `config.toml`
    /// and no checkpoint) starts again from iteration 0, since nothing of it was saved.
    pub fn resume(mut self, resume: bool) -> Self {
        self.resume = resume;
        self
    }

    /// Show the observer an iteration only once its checkpoint is on disk (`true`), so that
    /// what it printed or kept (the CLI's `--json` lines) never runs ahead of what a resume
    /// continues from. The loop does not wait for the disk: it runs on while the checkpoints
    /// are written on a thread of their own, and the observer sees each iteration as its
    /// checkpoint lands (so an observer's stop can come an iteration or more late). Default
    /// `false`: the observer sees each iteration at once.
    pub fn durable(mut self, durable: bool) -> Self {
        self.durable = durable;
        self
    }

    /// Step in lockstep with the observer (`true`; implies [`RunOptions::durable`]): after
    /// each iteration the loop waits until its checkpoint is on disk and the observer has
    /// answered, so an observer's stop stops the run right there (Python's `Experiment`
    /// iterator). Default `false`.
    pub fn lockstep(mut self, lockstep: bool) -> Self {
        self.lockstep = lockstep;
        self.durable |= lockstep;
        self
    }

    /// Stop the run after the step in progress once `flag` is set (by a signal handler, a
    /// UI, another thread): the run writes its report, figures and page for what it did and
    /// ends as [`StopReason::Interrupted`](metagame_populations::StopReason); its checkpoint
    /// resumes to the uninterrupted run.
    pub fn interrupt(mut self, flag: Arc<AtomicBool>) -> Self {
        self.interrupt = Some(flag);
        self
    }

    /// Refresh the run folder's `report.json`, figures and `report.html` during the run
    /// (their `stop_reason` is `running`) once `every` has passed since the run started or
    /// since the last refresh, and at least ten times as long as the last refresh took (so
    /// a large league spends at most a tenth of its time on them); `None`: only at the end.
    /// Default [`REFRESH_EVERY`].
    pub fn refresh_every(mut self, every: Option<Duration>) -> Self {
        self.refresh_every = every;
        self
    }

    /// Stop right after the checkpoint of iteration `iteration`, without the final report,
    /// as a process killed then would (for tests of resumption).
    #[doc(hidden)]
    pub fn stop_after(mut self, iteration: Option<usize>) -> Self {
        self.stop_after = iteration;
        self
    }

    /// The run folder.
    pub fn out_dir(&self) -> &Path {
        &self.out_dir
    }

    /// Whether the run continues from the folder's checkpoint.
    pub fn resumes(&self) -> bool {
        self.resume
    }

    /// A cutoff that passes once the interrupt flag is set (never without one), so that a
    /// step in progress gives up on Ctrl-C instead of running to its end.
    fn interrupt_cutoff(&self) -> Cutoff {
        self.interrupt.clone().map_or_else(Cutoff::never, Cutoff::when_set)
    }

    fn interrupted(&self) -> bool {
        self.interrupt.as_ref().is_some_and(|f| f.load(Ordering::SeqCst))
    }
}

/// Make the run folder `dir` ready for a run of `config` and hold its lock: created if
/// missing, a killed run's temporary files removed, a previous run's files removed unless
/// the run `resumed`, the config written.
///
/// # Errors
///
/// [`Error::FolderInUse`], [`Error::Output`].
fn open_folder(config: &ExperimentConfig, dir: &Path, resumed: bool) -> Result<RunLock> {
    if dir.exists() && !dir.is_dir() {
        return Err(output_err(dir, "not a folder"));
    }
    fs::create_dir_all(dir).map_err(|e| output_err(dir, e))?;
    let lock = RunLock::acquire(dir)?;
    remove_stale_temporaries(dir)?;
    if !resumed {
        clear_previous_run(dir)?;
    }
    checkpoint::write_atomic(&dir.join(CONFIG_FILE), config.to_toml().as_bytes())?;
    Ok(lock)
}

pub(crate) fn output_err(path: &Path, e: impl Into<crate::error::BoxError>) -> Error {
    Error::Output { path: path.into(), source: e.into() }
}

/// A run folder being driven: the config, the options, the observer and the saved state.
pub(crate) struct Driver<'a> {
    config: &'a ExperimentConfig,
    options: &'a RunOptions,
    observer: &'a mut dyn FnMut(&IterationReport) -> ControlFlow<()>,
    saved: Option<Saved>,
    /// A game played through foreign code (pyspiel, PettingZoo), whose failed calls are
    /// recorded, not returned: asked before every commit, so that an iteration that met one
    /// is never checkpointed.
    external: Option<metagame_games::ExternalGame>,
}

/// What a resumed run continues from: the checkpoint's state, the run's reports and how much
/// of the history log holds them.
struct Saved {
    state: serde_json::Value,
    reports: Vec<IterationReport>,
    mark: HistoryMark,
}

fn checkpoint_err(path: PathBuf, reason: impl Into<String>) -> Error {
    Error::Checkpoint { path, reason: reason.into() }
}

impl<'a> Driver<'a> {
    /// Prepare a run: read the checkpoint when resuming (it must be of the same run). Writes
    /// nothing: the folder is made by [`Driver::run`], once the loop has been built, so a run
    /// that cannot start (a bad component, a meta-solver for other games) leaves no folder.
    pub(crate) fn new(
        config: &'a ExperimentConfig,
        options: &'a RunOptions,
        observer: &'a mut dyn FnMut(&IterationReport) -> ControlFlow<()>,
    ) -> Result<Self> {
        let dir = &options.out_dir;
        let saved = if options.resume {
            let path = dir.join(CHECKPOINT_FILE);
            if !path.exists() && Self::started_without_checkpoint(config, dir)? {
                // Stopped before its first checkpoint: nothing to continue, start again.
                None
            } else {
                let saved = RunCheckpoint::read(dir)?;
                if !saved.config.same_run_as(config) {
                    return Err(checkpoint_err(
                        path,
                        "the checkpoint was written by a different config (only max_iterations, target_nash_conv and time_budget_seconds may change)",
                    ));
                }
                // A checkpoint from before the history log: its reports start the log anew.
                let mark = saved.history.unwrap_or_default();
                Some(Saved { state: saved.state, reports: saved.reports, mark })
            }
        } else {
            None
        };
        Ok(Self { config, options, observer, saved, external: None })
    }

    /// Check `game`'s failure slot before every commit (a game played through foreign code).
    pub(crate) fn checking(mut self, game: Option<&metagame_games::AnyGame>) -> Self {
        if let Some(metagame_games::AnyGame::External(external)) = game {
            self.external = Some(external.clone());
        }
        self
    }

    /// Whether `dir` holds a run of `config` that stopped before its first checkpoint: its
    /// `config.toml` is `config`'s run.
    fn started_without_checkpoint(config: &ExperimentConfig, dir: &Path) -> Result<bool> {
        let path = dir.join(CONFIG_FILE);
        if !path.is_file() {
            return Ok(false);
        }
        let started = ExperimentConfig::read(&path)?;
        if !started.same_run_as(config) {
            return Err(checkpoint_err(
                dir.join(CHECKPOINT_FILE),
                format!("missing, and {} describes another run", path.display()),
            ));
        }
        Ok(true)
    }
}

impl Drive for Driver<'_> {
    /// `None` when stopped by [`RunOptions::stop_after`].
    type Output = Option<RunReport>;

    /// The saved loop state when resuming (`None` when starting afresh, or again).
    ///
    /// # Errors
    ///
    /// [`Error::Checkpoint`] when the checkpoint's state is not a state of this loop.
    fn saved_state<S: DeserializeOwned>(&mut self) -> Result<Option<(S, Vec<IterationReport>)>> {
        let Some(Saved { state, reports, .. }) = self.saved.as_ref() else { return Ok(None) };
        let state = serde_json::from_value(state.clone()).map_err(|e| {
            checkpoint_err(
                self.options.out_dir.join(CHECKPOINT_FILE),
                format!("the checkpoint's state does not fit the config's algorithm: {e}"),
            )
        })?;
        Ok(Some((state, reports.clone())))
    }

    fn run_folder(&self) -> &Path {
        &self.options.out_dir
    }

    fn member_file(&self, file: &str) -> Result<Vec<u8>> {
        let path = self.options.out_dir.join(file);
        let named = Path::new(file).components().all(|c| matches!(c, std::path::Component::Normal(_)));
        if !named {
            return Err(checkpoint_err(
                self.options.out_dir.join(CHECKPOINT_FILE),
                format!("the checkpoint names a member file outside the run folder: {file}"),
            ));
        }
        std::fs::read(&path).map_err(|e| {
            checkpoint_err(
                self.options.out_dir.join(CHECKPOINT_FILE),
                format!("member file {} (named by the checkpoint): {e}", path.display()),
            )
        })
    }

    fn start_cutoff(&self) -> Cutoff {
        let budget = self.config.limits().time_budget_seconds();
        let deadline = budget
            .and_then(|b| std::time::Duration::try_from_secs_f64(b).ok())
            .and_then(|b| Instant::now().checked_add(b));
        let interrupt = self.options.interrupt_cutoff();
        match deadline {
            Some(d) => interrupt.or_at(d),
            None => interrupt,
        }
    }

    fn cut_before_start(self) -> Result<Option<RunReport>> {
        let Driver { config, options, .. } = self;
        let dir = &options.out_dir;
        let _lock = open_folder(config, dir, false)?;
        let report = RunReport {
            config: config.clone(),
            stop_reason: StopReason::TimeBudget,
            iterations: Vec::new(),
            meta_game: None,
            meta_game_shape: Vec::new(),
            meta_game_file: None,
            meta_game_stderr: None,
            member_elo: None,
        };
        checkpoint::write_atomic(&dir.join(REPORT_FILE), &report_json(&report, dir)?)?;
        Ok(Some(report))
    }

    /// Run `lp` to a stop and write the run folder; `None` when stopped by
    /// [`RunOptions::stop_after`]. A failing step leaves the folder with the checkpoint of the
    /// last committed iteration.
    fn run_with_figures<L: TrainingLoop>(
        self,
        mut lp: L,
        figures: impl Fn(&L, &[IterationReport], &str, &Path) -> Result<()>,
    ) -> Result<Option<RunReport>> {
        let Driver { config, options, observer, saved, external } = self;
        // Continuing from a checkpoint (not a fresh start, nor a start again).
        let resumed = saved.is_some();
        // The run's reports: the checkpoint's when resuming, else the loop's first; `logged`
        // of them are in the history log already.
        let (mut history, mark): (Vec<IterationReport>, HistoryMark) = match saved {
            Some(Saved { reports, mark, .. }) => (reports, mark),
            None => (lp.last_report().cloned().into_iter().collect(), HistoryMark::default()),
        };
        let dir = &options.out_dir;
        let limits: &RunLimits = config.limits();
        if resumed && lp.iteration() > limits.max_iterations() {
            return Err(checkpoint_err(
                dir.join(CHECKPOINT_FILE),
                format!(
                    "the checkpoint is at iteration {}, past max_iterations = {}; resume with max_iterations of at least {}",
                    lp.iteration(),
                    limits.max_iterations(),
                    lp.iteration()
                ),
            ));
        }
        // Held to the end of the run (dropped after the checkpoint writer, declared below).
        let _lock = open_folder(config, dir, resumed)?;
        let log = dir.join(HISTORY_FILE);
        // In lockstep the loop waits for every write, so the writer must not rest between them.
        let writer = CheckpointWriter::new(dir.join(CHECKPOINT_FILE), log.clone(), mark, !options.lockstep)?;
        // Reports `..logged` are in the log or queued for it.
        let logged = Cell::new(mark.records);
        // How much of each appended file this run has written.
        let appended: RefCell<HashMap<String, usize>> = RefCell::new(HashMap::new());
        let save = |lp: &L, reports: &[IterationReport]| -> Result<()> {
            // An iteration that met a failed call of the game's foreign code is not kept: the
            // folder keeps the last good checkpoint, which resumes.
            if let Some(why) = external.as_ref().and_then(metagame_games::ExternalGame::take_failure) {
                return Err(Error::Game(metagame_games::Error::External(why)));
            }
            // Members' files first, so that every checkpoint names files on disk; a file of
            // that name holds those bytes already (the name is their hash).
            for (file, bytes) in lp.member_files() {
                let path = dir.join(file);
                if !path.exists() {
                    if let Some(parent) = path.parent() {
                        std::fs::create_dir_all(parent).map_err(|e| output_err(parent, e))?;
                    }
                    checkpoint::write_atomic(&path, bytes)?;
                }
            }
            for (file, content) in lp.appended_files() {
                let path = dir.join(file);
                let mut written = appended.borrow_mut();
                match written.get(file) {
                    // What this run has not written yet, appended.
                    Some(&done) if done <= content.len() => {
                        if done < content.len() {
                            append(&path, &content[done..])?;
                        }
                    }
                    // The first time (or after a failed round shortened it): the whole file.
                    _ => checkpoint::write_atomic(&path, content)?,
                }
                written.insert(file.to_string(), content.len());
            }
            let state = lp.state();
            let new = &reports[logged.get()..];
            let mut records = Vec::new();
            for r in new {
                records.extend(history_log::record(&log, r)?);
            }
            let cp = RunCheckpoint {
                config: config.clone(),
                state: state.clone(),
                reports: Vec::new(),
                history: None,
            };
            writer.submit(cp, &records, new.len())?;
            logged.set(reports.len());
            Ok(())
        };
        // The observer sees an iteration once its checkpoint is on disk when the run is
        // durable (what a resume continues from), at once otherwise; a resumed run's observer
        // sees only the iterations this run computes. `seen` reports have been shown.
        let seen = Cell::new(if resumed { history.len() } else { 0 });
        let broke = Cell::new(false);
        let observer = std::cell::RefCell::new(observer);
        let show = |reports: &[IterationReport], upto: usize| {
            while seen.get() < upto.min(reports.len()) && !broke.get() {
                if (observer.borrow_mut())(&reports[seen.get()]).is_break() {
                    broke.set(true);
                }
                seen.set(seen.get() + 1);
            }
        };
        let shown_upto = || if options.durable { writer.covered() } else { usize::MAX };
        if !resumed {
            save(&lp, &history)?;
            if options.durable {
                writer.wait_written()?;
            }
            show(&history, shown_upto());
        }
        // `stop_after`: exit as if killed once the checkpoint of that iteration is written
        // and the observer has seen it, unless the run would stop there anyway.
        let kill_at = |lp: &L| {
            options.stop_after.is_some_and(|k| lp.iteration() >= k)
                && limits.stop_reason(lp, lp.last_report()).is_none()
        };
        if kill_at(&lp) {
            writer.finish()?;
            return Ok(None);
        }
        let kill = Cell::new(false);
        let mut failed: Option<Error> = None;
        // The loop's own call of the observer is answered here; the reports are shown by
        // `show` as their checkpoints are written.
        let mut observe = |_: &IterationReport| {
            if broke.get() || kill.get() { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        };
        let interrupt = options.interrupt_cutoff();
        let mut refresh = Refresh::new(options.refresh_every);
        let stopped =
            run_loop_with(&mut lp, &mut history, limits, &interrupt, &mut observe, &mut |lp, reports| {
                if let Err(e) = save(lp, reports) {
                    failed = Some(e);
                    return Ok(ControlFlow::Break(()));
                }
                kill.set(kill_at(lp));
                if kill.get() || options.lockstep {
                    // Killed here: only once this iteration is on disk, and shown.
                    if let Err(e) = writer.wait_written() {
                        failed = Some(e);
                        return Ok(ControlFlow::Break(()));
                    }
                }
                show(reports, shown_upto());
                if let Some(since) = refresh.due() {
                    let written =
                        write_outputs(lp, config, dir, reports.to_vec(), StopReason::Running, &figures);
                    if let Err(e) = written {
                        failed = Some(e);
                        return Ok(ControlFlow::Break(()));
                    }
                    refresh.wrote(since);
                }
                // Interrupted: stop here, with this iteration saved.
                Ok(if options.interrupted() || kill.get() {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                })
            });
        // A run that ended makes its files while the writer puts its last checkpoint on disk
        // (they hold what the loop holds; a resume from an older checkpoint writes them
        // again).
        let outputs = match (&stopped, &failed) {
            (Ok(reason), None) if !kill.get() => {
                let reason = if options.interrupted() { StopReason::Interrupted } else { *reason };
                Some(write_outputs(&lp, config, dir, history.clone(), reason, &figures))
            }
            _ => None,
        };
        // Everything committed reaches the disk, and then the observer, however the loop
        // stopped.
        let finished = writer.finish();
        if failed.is_none() && finished.is_ok() {
            show(&history, usize::MAX);
        }
        stopped?;
        if let Some(e) = failed {
            return Err(e);
        }
        finished?;
        outputs.transpose()
    }
}

/// `report` as `report.json`'s bytes: indented while small enough to read by eye, compact
/// past [`REPORT_INDENTED_BYTES`] (a long league's per-member ratings would more than double
/// in size indented).
fn report_json(report: &RunReport, dir: &Path) -> Result<Vec<u8>> {
    let failed = |e| output_err(&dir.join(REPORT_FILE), e);
    let compact = serde_json::to_vec(report).map_err(failed)?;
    if compact.len() > REPORT_INDENTED_BYTES {
        return Ok(compact);
    }
    serde_json::to_vec_pretty(report).map_err(failed)
}

/// The largest `report.json` (compact) written indented.
const REPORT_INDENTED_BYTES: usize = 1 << 20;

/// Append `bytes` to the file at `path` and flush them to the disk before the checkpoint that
/// counts them is written.
fn append(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut file = OpenOptions::new().append(true).open(path).map_err(|e| output_err(path, e))?;
    file.write_all(bytes).and_then(|()| file.sync_data()).map_err(|e| output_err(path, e))
}

/// When a running run's folder is next refreshed ([`RunOptions::refresh_every`]).
struct Refresh {
    every: Option<Duration>,
    next: Instant,
}

impl Refresh {
    fn new(every: Option<Duration>) -> Self {
        let now = Instant::now();
        Refresh { every, next: every.and_then(|e| now.checked_add(e)).unwrap_or(now) }
    }

    /// The moment the refresh started, when one is due now.
    fn due(&self) -> Option<Instant> {
        let now = Instant::now();
        (self.every.is_some() && now >= self.next).then_some(now)
    }

    /// A refresh begun at `since` is written: the next one after `every`, and after ten
    /// times this one's duration.
    fn wrote(&mut self, since: Instant) {
        let now = Instant::now();
        let every = self.every.unwrap_or_default().max(now.duration_since(since) * 10);
        self.next = now.checked_add(every).unwrap_or(now);
    }
}

/// Write the run folder's report, meta-game, lineage, figures and page for `history` as it
/// stands; `StopReason::Running` when refreshed during the run. Every file atomically.
fn write_outputs<L: TrainingLoop>(
    lp: &L,
    config: &ExperimentConfig,
    dir: &Path,
    history: Vec<IterationReport>,
    stop_reason: StopReason,
    figures: &impl Fn(&L, &[IterationReport], &str, &Path) -> Result<()>,
) -> Result<RunReport> {
    let meta_game = lp.meta_game()?;
    let (meta_values, meta_shape) = match &meta_game {
        Some(g) => (
            Some((0..g.num_players()).map(|p| g.payoffs(p).iter().copied().collect()).collect()),
            g.shape().to_vec(),
        ),
        None => (None, Vec::new()),
    };
    // A loop that keeps its meta-game in a file of its own: the report names it.
    let meta_game_file = lp.meta_game_file().map(str::to_string);
    let report = RunReport {
        config: config.clone(),
        stop_reason,
        iterations: history,
        meta_game: if meta_game_file.is_some() { None } else { meta_values },
        meta_game_shape: meta_shape,
        meta_game_file: meta_game_file.clone(),
        meta_game_stderr: meta_game.as_ref().and_then(|_| lp.meta_game_stderr()),
        member_elo: meta_game.as_ref().and_then(|_| lp.member_elo()),
    };
    checkpoint::write_atomic(&dir.join(REPORT_FILE), &report_json(&report, dir)?)?;
    let lineage = lp.lineage_dot(&report.iterations);
    if let Some(dot) = &lineage {
        checkpoint::write_atomic(&dir.join("lineage.dot"), dot.as_bytes())?;
    }
    if let Some(g) = meta_game.as_ref().filter(|_| meta_game_file.is_none()) {
        // The final meta-game as Gambit .nfg, for `metagame solve` and other tools.
        let nfg = metagame_games::nfg::to_nfg_string(g);
        checkpoint::write_atomic(&dir.join(META_GAME_FILE), nfg.as_bytes())?;
    }
    #[cfg(feature = "plots")]
    crate::plots::write_run_figures(&report, meta_game.as_ref(), dir)?;
    figures(lp, &report.iterations, config.game(), dir)?;
    #[cfg(feature = "plots")]
    crate::report_html::write(&report, meta_game.as_ref(), lineage.as_deref(), dir)?;
    Ok(report)
}
