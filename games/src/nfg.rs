//! Gambit `.nfg` files: both body formats (payoff list and outcome list), rational payoffs.
//!
//! ```text
//! NFG 1 R "Matching pennies" { "Row" "Column" } { 2 2 }
//! 1 -1 -1 1 -1 1 1 -1
//! ```
//! Profiles are listed with player 1's strategy changing fastest.
//!
//! # Limits
//!
//! The header is checked before any payoff is stored: the profile count (the product of the
//! strategy counts) and the payoff count (profiles × players) must fit in 64 bits, the body
//! must have at least one byte per value it promises, and the payoffs may number at most
//! [`NfgLimits::max_payoffs`] (default 10^8, 800 MB of `f64`). [`read_nfg`] reads at most
//! [`NfgLimits::max_file_bytes`] (default 1 GiB). Both can be raised with
//! [`from_nfg_str_with_limits`] and [`read_nfg_with_limits`].
//!
//! # Complexity
//!
//! One pass over the text, no allocation per value: a 50 MB payoff-list file reads in
//! about a second.

use ndarray::{ArrayD, IxDyn};
use num_rational::BigRational;
use num_traits::ToPrimitive;

use crate::error::{Error, Result, read_text_capped};
use crate::normal_form::NormalFormGame;

/// Size limits of the `.nfg` reader. Every limit is checked against the header before the
/// memory for the payoffs is committed.
///
/// # Examples
///
/// ```
/// use metagame_games::nfg::{self, NfgLimits};
///
/// let text = "NFG 1 R \"\" { \"a\" \"b\" } { 2 2 }\n1 -1 -1 1 -1 1 1 -1";
/// assert!(nfg::from_nfg_str_with_limits(text, &NfgLimits::default().with_max_payoffs(4)).is_err());
/// assert!(nfg::from_nfg_str_with_limits(text, &NfgLimits::default().with_max_payoffs(8)).is_ok());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct NfgLimits {
    max_payoffs: u64,
    max_file_bytes: u64,
}

impl NfgLimits {
    /// Default of [`NfgLimits::max_payoffs`]: 10^8 payoffs, 800 MB of `f64`.
    pub const DEFAULT_MAX_PAYOFFS: u64 = 100_000_000;
    /// Default of [`NfgLimits::max_file_bytes`]: 1 GiB.
    pub const DEFAULT_MAX_FILE_BYTES: u64 = 1 << 30;

    /// The most payoffs (profiles × players) a file may hold.
    pub fn max_payoffs(&self) -> u64 {
        self.max_payoffs
    }
    /// The most bytes [`read_nfg_with_limits`] reads.
    pub fn max_file_bytes(&self) -> u64 {
        self.max_file_bytes
    }
    /// The same limits with another [`NfgLimits::max_payoffs`].
    pub fn with_max_payoffs(mut self, max_payoffs: u64) -> Self {
        self.max_payoffs = max_payoffs;
        self
    }
    /// The same limits with another [`NfgLimits::max_file_bytes`].
    pub fn with_max_file_bytes(mut self, max_file_bytes: u64) -> Self {
        self.max_file_bytes = max_file_bytes;
        self
    }
}

impl Default for NfgLimits {
    fn default() -> Self {
        Self { max_payoffs: Self::DEFAULT_MAX_PAYOFFS, max_file_bytes: Self::DEFAULT_MAX_FILE_BYTES }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Token<'a> {
    Word(&'a str),
    /// The text between the quotes, escapes not yet resolved.
    Quoted(&'a str),
    Open,
    Close,
}

impl std::fmt::Display for Token<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Token::Word(w) => write!(f, "`{w}`"),
            Token::Quoted(s) => write!(f, "\"{s}\""),
            Token::Open => f.write_str("`{`"),
            Token::Close => f.write_str("`}`"),
        }
    }
}

fn nfg_err(line: usize, reason: impl Into<String>) -> Error {
    Error::Nfg { line, reason: reason.into() }
}

/// A separator between tokens (ASCII whitespace or a comma); `{`, `}` and `"` end words too.
fn is_separator(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c | b',')
}

/// A token with the line it starts on and the position and line after it.
struct Lexed<'a> {
    token: Token<'a>,
    line: usize,
    end: usize,
    end_line: usize,
}

/// Tokens read one at a time from the text, borrowed from it.
struct Lexer<'a> {
    text: &'a str,
    pos: usize,
    line: usize,
    /// The line of the last token taken (for errors at the end of the file).
    last_line: usize,
    ahead: Option<Lexed<'a>>,
}

impl<'a> Lexer<'a> {
    fn new(text: &'a str) -> Self {
        Self { text, pos: 0, line: 1, last_line: 1, ahead: None }
    }

    /// The character at `pos` when it is not ASCII, and whether it is whitespace.
    fn wide_space(&self, pos: usize) -> Option<usize> {
        let c = self.text[pos..].chars().next()?;
        c.is_whitespace().then(|| c.len_utf8())
    }

    fn lex(&self) -> Result<Option<Lexed<'a>>> {
        let bytes = self.text.as_bytes();
        let (mut pos, mut line) = (self.pos, self.line);
        loop {
            match bytes.get(pos) {
                None => return Ok(None),
                Some(b'\n') => {
                    line += 1;
                    pos += 1;
                }
                Some(&b) if is_separator(b) => pos += 1,
                Some(&b) if b >= 0x80 => match self.wide_space(pos) {
                    Some(len) => pos += len,
                    None => break,
                },
                Some(_) => break,
            }
        }
        let (start, start_line) = (pos, line);
        let token = match bytes[pos] {
            b'{' => {
                pos += 1;
                Token::Open
            }
            b'}' => {
                pos += 1;
                Token::Close
            }
            b'"' => {
                pos += 1;
                loop {
                    match bytes.get(pos) {
                        None => return Err(nfg_err(start_line, "unterminated string")),
                        Some(b'"') => break,
                        Some(b'\\') => {
                            pos += 1;
                            if bytes.get(pos) == Some(&b'\n') {
                                line += 1;
                            }
                            // Skip the whole escaped character.
                            pos += self.text[pos..].chars().next().map_or(0, char::len_utf8);
                        }
                        Some(b'\n') => {
                            line += 1;
                            pos += 1;
                        }
                        Some(_) => pos += 1,
                    }
                }
                pos += 1;
                Token::Quoted(&self.text[start + 1..pos - 1])
            }
            _ => {
                while let Some(&b) = bytes.get(pos) {
                    if is_separator(b) || matches!(b, b'{' | b'}' | b'"') {
                        break;
                    }
                    if b >= 0x80 {
                        if self.wide_space(pos).is_some() {
                            break;
                        }
                        pos += self.text[pos..].chars().next().map_or(1, char::len_utf8);
                    } else {
                        pos += 1;
                    }
                }
                Token::Word(&self.text[start..pos])
            }
        };
        Ok(Some(Lexed { token, line: start_line, end: pos, end_line: line }))
    }

    fn peek(&mut self) -> Result<Option<Token<'a>>> {
        if self.ahead.is_none() {
            self.ahead = self.lex()?;
        }
        Ok(self.ahead.as_ref().map(|l| l.token))
    }

    /// The line of the next token, or of the last one at the end of the file.
    fn line(&mut self) -> usize {
        match self.peek() {
            Ok(Some(_)) => self.ahead.as_ref().map_or(self.last_line, |l| l.line),
            _ => self.last_line,
        }
    }

    /// Bytes not yet read (after the last token taken).
    fn rest_len(&self) -> usize {
        self.text.len() - self.pos
    }

    fn next(&mut self, what: &str) -> Result<Token<'a>> {
        let lexed = match self.ahead.take() {
            Some(l) => Some(l),
            None => self.lex()?,
        };
        let Some(l) = lexed else {
            return Err(nfg_err(self.last_line, format!("unexpected end of file, expected {what}")));
        };
        self.pos = l.end;
        self.line = l.end_line;
        self.last_line = l.line;
        Ok(l.token)
    }

    fn expect(&mut self, token: Token<'_>, what: &str) -> Result<()> {
        let line = self.line();
        let t = self.next(what)?;
        if t == token { Ok(()) } else { Err(nfg_err(line, format!("expected {what}, found {t}"))) }
    }

    fn quoted(&mut self, what: &str) -> Result<String> {
        let line = self.line();
        match self.next(what)? {
            Token::Quoted(s) => Ok(unescape(s)),
            t => Err(nfg_err(line, format!("expected {what}, found {t}"))),
        }
    }

    fn number(&mut self) -> Result<f64> {
        match self.next("a number")? {
            Token::Word(w) => parse_number(w, self.last_line),
            t => Err(nfg_err(self.last_line, format!("expected a number, found {t}"))),
        }
    }
}

/// A quoted string's text with its escapes resolved (`\x` is `x`).
fn unescape(raw: &str) -> String {
    if !raw.contains('\\') {
        return raw.to_string();
    }
    let mut s = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(e) = chars.next() {
                s.push(e);
            }
        } else {
            s.push(c);
        }
    }
    s
}

/// An integer of at most `max_digits` decimal digits with an optional sign.
fn parse_small_integer(word: &[u8], max_digits: usize) -> Option<(bool, i64)> {
    let (negative, digits) = match word.first()? {
        b'-' => (true, &word[1..]),
        b'+' => (false, &word[1..]),
        _ => (false, word),
    };
    if digits.is_empty() || digits.len() > max_digits {
        return None;
    }
    let mut value: i64 = 0;
    for &d in digits {
        let d = d.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        value = value * 10 + i64::from(d);
    }
    Some((negative, value))
}

/// Parse a number as Gambit writes it: integer, decimal (`0.25`, `1e-3`) or rational (`1/3`),
/// rounded to the nearest `f64`.
fn parse_number(word: &str, line: usize) -> Result<f64> {
    // Integers of up to 18 digits: `as f64` rounds to nearest as `str::parse` does.
    if let Some((negative, v)) = parse_small_integer(word.as_bytes(), 18) {
        let x = v as f64;
        return Ok(if negative { -x } else { x });
    }
    let bad = || nfg_err(line, format!("`{word}` is not a number"));
    let value = if let Some((num, den)) = word.split_once('/') {
        // Both parts below 2^53 are exact in f64, so one division rounds the ratio correctly.
        let small =
            |part: &str| parse_small_integer(part.as_bytes(), 15).map(|(neg, v)| if neg { -v } else { v });
        match (small(num), small(den)) {
            (Some(_), Some(0)) => return Err(nfg_err(line, format!("`{word}` divides by zero"))),
            (Some(0), Some(_)) => 0.0,
            (Some(n), Some(d)) => n as f64 / d as f64,
            _ => {
                let num: num_bigint::BigInt = num.parse().map_err(|_| bad())?;
                let den: num_bigint::BigInt = den.parse().map_err(|_| bad())?;
                if den == num_bigint::BigInt::from(0) {
                    return Err(nfg_err(line, format!("`{word}` divides by zero")));
                }
                BigRational::new(num, den).to_f64().ok_or_else(bad)?
            }
        }
    } else {
        word.parse::<f64>().map_err(|_| bad())?
    };
    if !value.is_finite() {
        return Err(nfg_err(line, format!("`{word}` is not finite")));
    }
    Ok(value)
}

/// The strategy counts as the header gives them (`{ 2 2 2 … }`, the first 8).
fn describe_counts(counts: &[u64]) -> String {
    let mut s = String::from("{");
    for k in counts.iter().take(8) {
        s.push_str(&format!(" {k}"));
    }
    if counts.len() > 8 {
        s.push_str(&format!(" … ({} players)", counts.len()));
    }
    s.push_str(" }");
    s
}

/// The row-major (last player fastest) offsets of a tensor's profiles, listed in Gambit's
/// order (first player fastest).
fn row_major_offsets(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for a in (0..shape.len().saturating_sub(1)).rev() {
        strides[a] = strides[a + 1] * shape[a + 1];
    }
    let total: usize = shape.iter().product();
    let mut offsets = Vec::with_capacity(total);
    let (mut index, mut offset) = (vec![0; shape.len()], 0);
    for _ in 0..total {
        offsets.push(offset);
        for a in 0..shape.len() {
            index[a] += 1;
            offset += strides[a];
            if index[a] < shape[a] {
                break;
            }
            index[a] = 0;
            offset -= shape[a] * strides[a];
        }
    }
    offsets
}

/// A payoff tensor listed in Gambit's order, in row-major order.
///
/// The players split into a low group (first `k`) and a high one, of about equal sizes: in
/// Gambit's order a profile sits at `low_gambit + |low| · high_gambit`, in row-major order at
/// `low_row_major · |high| + high_row_major`, so the conversion is a transpose of a
/// `|high| × |low|` matrix with its rows and columns renumbered, done in tiles that stay in
/// cache (a profile-by-profile scatter misses the cache on every write).
fn gambit_to_row_major(gambit: &[f64], shape: &[usize]) -> Vec<f64> {
    const TILE: usize = 32;
    let total = gambit.len();
    let size = |axes: &[usize]| axes.iter().product::<usize>();
    // INVARIANT: k ranges over 0..=len, and some k exists.
    let k = (0..=shape.len()).min_by_key(|&k| size(&shape[..k]).max(size(&shape[k..]))).expect("k");
    let (low, high) = (size(&shape[..k]), size(&shape[k..]));
    let low_row_major = row_major_offsets(&shape[..k]);
    let mut high_gambit = vec![0; high];
    for (g, &r) in row_major_offsets(&shape[k..]).iter().enumerate() {
        high_gambit[r] = g;
    }
    let mut out = vec![0.0; total];
    for h0 in (0..high).step_by(TILE) {
        for l0 in (0..low).step_by(TILE) {
            let ls = l0..(l0 + TILE).min(low);
            for h in h0..(h0 + TILE).min(high) {
                let row = &gambit[high_gambit[h] * low..][..low];
                for l in ls.clone() {
                    out[low_row_major[l] * high + h] = row[l];
                }
            }
        }
    }
    out
}

/// Read a game from the text of a Gambit `.nfg` file, within the default [`NfgLimits`].
///
/// # Errors
///
/// As [`from_nfg_str_with_limits`].
pub fn from_nfg_str(text: &str) -> Result<NormalFormGame> {
    from_nfg_str_with_limits(text, &NfgLimits::default())
}

/// Read a game from the text of a Gambit `.nfg` file.
///
/// # Errors
///
/// [`Error::Nfg`] with the line of the first problem (a header whose counts overflow 64 bits
/// or promise more values than the body has bytes is one); [`Error::LimitExceeded`] past
/// [`NfgLimits::max_payoffs`]; the errors of [`NormalFormGame::new`].
pub fn from_nfg_str_with_limits(text: &str, limits: &NfgLimits) -> Result<NormalFormGame> {
    let mut c = Lexer::new(text);
    c.expect(Token::Word("NFG"), "`NFG` at the start")?;
    c.expect(Token::Word("1"), "version 1")?;
    let line = c.line();
    match c.next("`R` or `D`")? {
        Token::Word("R" | "D") => {}
        t => return Err(nfg_err(line, format!("expected `R` or `D`, found {t}"))),
    }
    let title = c.quoted("the title string")?;
    c.expect(Token::Open, "`{` before the player names")?;
    let mut players = Vec::new();
    while let Some(Token::Quoted(_)) = c.peek()? {
        players.push(c.quoted("a player name")?);
    }
    c.expect(Token::Close, "`}` after the player names")?;
    if players.len() < 2 {
        return Err(nfg_err(c.line(), "a game needs at least 2 players"));
    }
    let n = players.len();

    let header_line = c.line();
    c.expect(Token::Open, "`{` before the strategy counts")?;
    let mut counts: Vec<u64> = Vec::with_capacity(n);
    let mut named: Vec<Option<Vec<String>>> = Vec::with_capacity(n);
    for _ in 0..n {
        let line = c.line();
        match c.next("a strategy count or list")? {
            Token::Word(w) => {
                let k: u64 =
                    w.parse().map_err(|_| nfg_err(line, format!("`{w}` is not a strategy count")))?;
                if k == 0 {
                    return Err(nfg_err(line, "a player has no strategy"));
                }
                counts.push(k);
                named.push(None);
            }
            Token::Open => {
                let mut names = Vec::new();
                while let Some(Token::Quoted(_)) = c.peek()? {
                    names.push(c.quoted("a strategy name")?);
                }
                c.expect(Token::Close, "`}` after the strategy names")?;
                if names.is_empty() {
                    return Err(nfg_err(line, "a player has no strategy"));
                }
                counts.push(names.len() as u64);
                named.push(Some(names));
            }
            t => return Err(nfg_err(line, format!("expected a strategy count, found {t}"))),
        }
    }
    c.expect(Token::Close, "`}` after the strategies")?;
    if let Some(Token::Quoted(_)) = c.peek()? {
        c.quoted("a comment")?;
    }

    // Sizes, checked before anything is allocated for them.
    let outcome_list = c.peek()? == Some(Token::Open);
    let header = describe_counts(&counts);
    let overflow = || {
        nfg_err(header_line, format!("the strategy counts {header} give more payoffs than fit in 64 bits"))
    };
    let num_profiles = counts.iter().try_fold(1u64, |acc, &k| acc.checked_mul(k)).ok_or_else(overflow)?;
    let num_payoffs = num_profiles.checked_mul(n as u64).ok_or_else(overflow)?;
    // Every value the body lists (a payoff, or an outcome number per profile) takes a byte
    // and a separator.
    let (listed, kind) =
        if outcome_list { (num_profiles, "outcome numbers") } else { (num_payoffs, "payoffs") };
    let room = (c.rest_len() as u64).div_ceil(2);
    if listed > room {
        return Err(nfg_err(
            header_line,
            format!(
                "the strategy counts {header} promise {listed} {kind}, but the {} bytes after the header hold at most {room}",
                c.rest_len()
            ),
        ));
    }
    if num_payoffs > limits.max_payoffs {
        return Err(Error::LimitExceeded {
            what: format!(
                "the .nfg header's strategy counts {header} give {num_profiles} profiles × {n} players = {num_payoffs} payoffs"
            ),
            limit: limits.max_payoffs,
            unit: "payoffs",
            raise: "`nfg::NfgLimits::with_max_payoffs`",
        });
    }
    // INVARIANT: num_profiles ≤ the text's length, which is a usize.
    let num_profiles = num_profiles as usize;
    let shape: Vec<usize> = counts.iter().map(|&k| k as usize).collect();

    // Filled in Gambit's order, converted to row-major order at the end.
    let mut payoffs: Vec<Vec<f64>> = (0..n).map(|_| vec![0.0; num_profiles]).collect();
    if outcome_list {
        // Outcome list, then one outcome number per profile (0 = all payoffs zero).
        c.expect(Token::Open, "`{` before the outcomes")?;
        let mut outcomes: Vec<f64> = Vec::new();
        while c.peek()? == Some(Token::Open) {
            c.expect(Token::Open, "`{` of an outcome")?;
            c.quoted("the outcome's name")?;
            for _ in 0..n {
                outcomes.push(c.number()?);
            }
            c.expect(Token::Close, "`}` after an outcome's payoffs")?;
        }
        c.expect(Token::Close, "`}` after the outcomes")?;
        let num_outcomes = outcomes.len() / n;
        for profile in 0..num_profiles {
            let line = c.line();
            let k = match c.next("an outcome number")? {
                Token::Word(w) => w
                    .parse::<usize>()
                    .map_err(|_| nfg_err(line, format!("`{w}` is not an outcome number")))?,
                t => return Err(nfg_err(line, format!("expected an outcome number, found {t}"))),
            };
            if k > num_outcomes {
                return Err(nfg_err(line, format!("outcome {k} does not exist")));
            }
            if k > 0 {
                let values = &outcomes[(k - 1) * n..k * n];
                for (column, &v) in payoffs.iter_mut().zip(values) {
                    column[profile] = v;
                }
            }
        }
    } else {
        for profile in 0..num_profiles {
            for column in payoffs.iter_mut() {
                column[profile] = c.number()?;
            }
        }
    }
    if c.peek()?.is_some() {
        return Err(nfg_err(c.line(), "unexpected text after the payoffs"));
    }

    let tensors = payoffs
        .into_iter()
        .map(|v| {
            ArrayD::from_shape_vec(IxDyn(&shape), gambit_to_row_major(&v, &shape))
                .map_err(|e| nfg_err(1, format!("payoff count: {e}")))
        })
        .collect::<Result<Vec<_>>>()?;
    let game = NormalFormGame::new(tensors)?.with_title(title);
    if named.iter().all(Option::is_none) {
        // The default strategy names ("1", "2", …) are the ones a count stands for.
        return game.with_player_names(players);
    }
    let strategies = named
        .into_iter()
        .zip(&shape)
        .map(|(names, &k)| names.unwrap_or_else(|| (1..=k).map(|s| s.to_string()).collect()))
        .collect();
    game.with_names(players, strategies)
}

/// Read a `.nfg` file within the default [`NfgLimits`].
///
/// # Errors
///
/// As [`read_nfg_with_limits`].
pub fn read_nfg(path: &std::path::Path) -> Result<NormalFormGame> {
    read_nfg_with_limits(path, &NfgLimits::default())
}

/// Read a `.nfg` file of at most [`NfgLimits::max_file_bytes`] bytes.
///
/// # Errors
///
/// [`Error::Io`] if it cannot be read; [`Error::LimitExceeded`] for a larger file; otherwise
/// as [`from_nfg_str_with_limits`].
pub fn read_nfg_with_limits(path: &std::path::Path, limits: &NfgLimits) -> Result<NormalFormGame> {
    let text = read_text_capped(path, limits.max_file_bytes, "`nfg::NfgLimits::with_max_file_bytes`")?;
    from_nfg_str_with_limits(&text, limits)
}

fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Write a game in the payoff-list format with strategy counts (`{ 3 2 }`), the form both
/// Gambit and OpenSpiel's `load_nfg_game` read (OpenSpiel's reader takes no strategy names
/// and no comment line); payoffs printed exactly with `{}` of f64. Strategy names are not
/// kept: read back, strategies are named `1`, `2`, … as Gambit names counted ones.
pub fn to_nfg_string(game: &NormalFormGame) -> String {
    let mut out = format!("NFG 1 R {} {{ ", quote(game.title()));
    for p in game.player_names() {
        out.push_str(&quote(p));
        out.push(' ');
    }
    out.push_str("} { ");
    for k in game.shape() {
        out.push_str(&format!("{k} "));
    }
    out.push_str("}\n\n");
    let shape = game.shape().to_vec();
    let mut idx = vec![0usize; shape.len()];
    for _ in 0..game.num_profiles() {
        let line: Vec<String> =
            (0..game.num_players()).map(|p| format!("{}", game.payoff(p, &idx))).collect();
        out.push_str(&line.join(" "));
        out.push('\n');
        // Player 1 (axis 0) fastest.
        for (axis, i) in idx.iter_mut().enumerate() {
            *i += 1;
            if *i < shape[axis] {
                break;
            }
            *i = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The reader before the fast paths: `str::parse`, or exact rationals.
    fn reference_number(word: &str) -> Option<f64> {
        match word.split_once('/') {
            Some((num, den)) => {
                let num: num_bigint::BigInt = num.parse().ok()?;
                let den: num_bigint::BigInt = den.parse().ok()?;
                BigRational::new(num, den).to_f64()
            }
            None => word.parse().ok(),
        }
    }

    fn header(counts: &str) -> String {
        format!("NFG 1 R \"\" {{ \"a\" \"b\" }} {{ {counts} }}\n")
    }

    #[test]
    fn numbers_read_as_before() {
        for word in [
            "0",
            "-0",
            "+7",
            "123456789012345678",
            "-9007199254740993",
            "1/3",
            "-2/6",
            "0/-5",
            "-0/5",
            "3/-4",
        ] {
            let expected = reference_number(word).unwrap();
            assert_eq!(parse_number(word, 1).unwrap().to_bits(), expected.to_bits(), "{word}");
        }
        for word in ["0.25", "1e-3", "-1.5E+2", ".5", "5.", "12345678901234567890123", "9007199254740993/3"] {
            assert_eq!(
                parse_number(word, 1).unwrap().to_bits(),
                reference_number(word).unwrap().to_bits(),
                "{word}"
            );
        }
        for word in ["1/0", "x", "1e400", "inf", "NaN", "--1", "1/2/3", ""] {
            assert!(parse_number(word, 1).is_err(), "{word}");
        }
    }

    proptest! {
        #[test]
        fn integers_and_ratios_read_as_before(a in any::<i64>(), b in any::<i64>(), small in -99_999i64..99_999) {
            for word in [a.to_string(), format!("{a}/{b}"), format!("{small}/{b}"), format!("{a}/{small}"), format!("{}", a as f64 / 7.0)] {
                match reference_number(&word).filter(|v| v.is_finite()) {
                    Some(v) if !word.ends_with("/0") => prop_assert_eq!(parse_number(&word, 1).unwrap().to_bits(), v.to_bits()),
                    _ => prop_assert!(parse_number(&word, 1).is_err()),
                }
            }
        }
    }

    proptest! {
        #[test]
        fn tiled_conversion_is_ndarrays_layout_change(shape in prop::collection::vec(1usize..6, 2..6), wide in 30usize..80) {
            use ndarray::ShapeBuilder;
            for shape in [shape.clone(), vec![wide, 71], [vec![2; 12], vec![3]].concat()] {
                let values: Vec<f64> = (0..shape.iter().product::<usize>()).map(|k| k as f64).collect();
                let expected = ArrayD::from_shape_vec(IxDyn(&shape).f(), values.clone()).unwrap();
                let expected: Vec<f64> = expected.as_standard_layout().iter().copied().collect();
                prop_assert_eq!(gambit_to_row_major(&values, &shape), expected);
            }
        }
    }

    #[test]
    fn separators_quotes_and_lines() {
        // A no-break space separates like a space; escaped quotes stay in names.
        let text =
            "NFG 1 R \"t \\\"q\\\"\" { \"a\"\u{a0}\"b\" }\n{ 1 2 }\n\"multi\nline comment\"\n1,2\u{2003}3 4";
        let game = from_nfg_str(text).unwrap();
        assert_eq!(game.title(), "t \"q\"");
        assert_eq!(game.player_names(), ["a", "b"]);
        assert_eq!(game.payoff(1, &[0, 1]), 4.0);
        let err = from_nfg_str(&format!("{}1 2\n\n3 x", header("1 2"))).unwrap_err();
        assert!(err.to_string().contains("line 4: `x` is not a number"), "{err}");
        let err = from_nfg_str(&format!("{}1 2 3\n\n", header("1 2"))).unwrap_err();
        assert!(err.to_string().contains("line 2: unexpected end of file, expected a number"), "{err}");
    }

    #[test]
    fn overflowing_headers_are_errors_naming_them() {
        let err = from_nfg_str(&format!("{}1 2\n", header("18446744073709551615 18446744073709551615")))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "malformed .nfg at line 1: the strategy counts { 18446744073709551615 18446744073709551615 } give more payoffs than fit in 64 bits"
        );
        // 2^64 profiles would wrap to 0 without checked arithmetic.
        let names: String = (0..64).map(|p| format!("\"{p}\" ")).collect();
        let text = format!("NFG 1 R \"\" {{ {names}}} {{ {} }}\n1 2\n", "2 ".repeat(64));
        let err = from_nfg_str(&text).unwrap_err().to_string();
        assert!(
            err.contains("{ 2 2 2 2 2 2 2 2 … (64 players) } give more payoffs than fit in 64 bits"),
            "{err}"
        );
        assert!(from_nfg_str(&format!("{}1 2", header("99999999999999999999 1"))).is_err());
    }

    #[test]
    fn headers_promising_more_than_the_body_holds_are_errors() {
        let err = from_nfg_str(&format!("{}1 2\n", header("1000000 1000000"))).unwrap_err();
        assert!(matches!(err, Error::Nfg { line: 1, .. }), "{err}");
        assert!(
            err.to_string()
                .contains("promise 2000000000000 payoffs, but the 5 bytes after the header hold at most 3"),
            "{err}"
        );
        let err =
            from_nfg_str(&format!("{}{{ {{ \"\" 1 2 }} }}\n1\n", header("1000000 1000000"))).unwrap_err();
        assert!(err.to_string().contains("promise 1000000000000 outcome numbers"), "{err}");
        // Exactly enough bytes is fine: four one-digit payoffs need seven.
        assert!(from_nfg_str(&format!("{}1 2 3 4", header("1 2"))).is_ok());
    }

    #[test]
    fn the_payoff_limit_can_be_raised() {
        let text = format!("{}{{ {{ \"\" 1 2 }} }}\n1 1 1 1 1 1\n", header("2 3"));
        let err = from_nfg_str_with_limits(&text, &NfgLimits::default().with_max_payoffs(11)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the .nfg header's strategy counts { 2 3 } give 6 profiles × 2 players = 12 payoffs: more than the limit of 11 payoffs"
        );
        assert!(matches!(err, Error::LimitExceeded { raise: "`nfg::NfgLimits::with_max_payoffs`", .. }));
        let game = from_nfg_str_with_limits(&text, &NfgLimits::default().with_max_payoffs(12)).unwrap();
        assert_eq!(game.payoff(1, &[1, 2]), 2.0);
    }

    #[test]
    fn profiles_land_where_gambit_puts_them() {
        // Player 1 fastest: the 12 profiles of a 2×3×2 game in order, payoff = position.
        let names = "{ \"a\" \"b\" \"c\" }";
        let body: String = (0..12).map(|k| format!("{k} {} {} ", -k, 2 * k)).collect();
        let game = from_nfg_str(&format!("NFG 1 R \"\" {names} {{ 2 3 2 }}\n{body}")).unwrap();
        for k in 0..12usize {
            let profile = [k % 2, (k / 2) % 3, k / 6];
            assert_eq!(game.payoff(0, &profile), k as f64);
            assert_eq!(game.payoff(1, &profile), -(k as f64));
            assert_eq!(game.payoff(2, &profile), 2.0 * k as f64);
        }
        assert_eq!(from_nfg_str(&to_nfg_string(&game)).unwrap(), game);
    }
}
