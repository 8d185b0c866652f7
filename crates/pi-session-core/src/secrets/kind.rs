//! What a finding is (the credential's kind) and where in an entry it was found (its place).

/// A kind of credential the scanner knows. Its [`Kind::name`] is stable: it is printed, written
/// into redactions (`[REDACTED:<name>]`) and returned by the library call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// `sk-ant-api03-…`, `sk-ant-admin01-…`, `sk-ant-oat01-…` (Anthropic API, admin, OAuth).
    Anthropic,
    /// `sk-proj-…`, `sk-svcacct-…`, `sk-admin-…`, and legacy `sk-…T3BlbkFJ…` (OpenAI).
    OpenAi,
    /// `sk-or-v1-` and 64 hex digits (OpenRouter, a provider pi talks to).
    OpenRouter,
    /// `gsk_` and 52 letters and digits (Groq).
    Groq,
    /// `xai-` and 80 letters and digits (xAI).
    Xai,
    /// `AIza` and 35 URL-safe characters (Google API keys, Gemini's among them).
    Google,
    /// `AKIA…` / `ASIA…`: 20 characters, an AWS access key id (long-lived or temporary).
    AwsKeyId,
    /// 40 base64 characters next to an AWS access key id (never reported alone: too common a
    /// shape).
    AwsSecret,
    /// `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` and 36+ characters; `github_pat_…`.
    GitHub,
    /// `glpat-` and 20+ characters (GitLab personal access tokens).
    GitLab,
    /// `xoxa-`, `xoxb-`, `xoxp-`, `xoxr-`, `xoxs-` tokens with their digit groups (Slack).
    Slack,
    /// `hooks.slack.com/services/T…/B…/…` (a Slack incoming webhook: anyone with it can post).
    SlackWebhook,
    /// `sk_live_…`, `rk_live_…` (Stripe live secret and restricted keys; test keys move no money).
    Stripe,
    /// `npm_` and 36 letters and digits (npm access tokens).
    Npm,
    /// A PEM private key block (`-----BEGIN … PRIVATE KEY-----` with a body).
    PrivateKey,
    /// The password of a URL `scheme://user:password@host`.
    UrlPassword,
    /// A JSON Web Token: three base64url parts whose header is JSON with `alg`.
    Jwt,
}

impl Kind {
    /// Every kind, in the order they are listed.
    pub const ALL: [Kind; 17] = [
        Kind::Anthropic,
        Kind::OpenAi,
        Kind::OpenRouter,
        Kind::Groq,
        Kind::Xai,
        Kind::Google,
        Kind::AwsKeyId,
        Kind::AwsSecret,
        Kind::GitHub,
        Kind::GitLab,
        Kind::Slack,
        Kind::SlackWebhook,
        Kind::Stripe,
        Kind::Npm,
        Kind::PrivateKey,
        Kind::UrlPassword,
        Kind::Jwt,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Anthropic => "anthropic-api-key",
            Kind::OpenAi => "openai-api-key",
            Kind::OpenRouter => "openrouter-api-key",
            Kind::Groq => "groq-api-key",
            Kind::Xai => "xai-api-key",
            Kind::Google => "google-api-key",
            Kind::AwsKeyId => "aws-access-key-id",
            Kind::AwsSecret => "aws-secret-access-key",
            Kind::GitHub => "github-token",
            Kind::GitLab => "gitlab-token",
            Kind::Slack => "slack-token",
            Kind::SlackWebhook => "slack-webhook",
            Kind::Stripe => "stripe-live-key",
            Kind::Npm => "npm-token",
            Kind::PrivateKey => "private-key",
            Kind::UrlPassword => "url-password",
            Kind::Jwt => "jwt",
        }
    }

    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// Where in an entry a string was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Place {
    /// A user message's content.
    User,
    /// A tool result (`content`, `details`), or the output of a `!command` (`bashExecution`).
    ToolOutput,
    /// A tool call's name and arguments, or a `!command`'s command line.
    ToolArgs,
    /// An assistant message's text (and its error message).
    Assistant,
    /// An assistant's thinking.
    Thinking,
    /// An extension's data: a `custom` entry's `data`, a `custom_message`'s content and details,
    /// a message of an extension's role.
    Custom,
    /// A compaction's or a branch summary's summary (and details).
    Summary,
    /// Anything else: the header, a session name, a label, a line that is not JSON.
    Other,
}

impl Place {
    pub fn name(self) -> &'static str {
        match self {
            Place::User => "user",
            Place::ToolOutput => "tool-output",
            Place::ToolArgs => "tool-args",
            Place::Assistant => "assistant",
            Place::Thinking => "thinking",
            Place::Custom => "custom",
            Place::Summary => "summary",
            Place::Other => "other",
        }
    }
}
