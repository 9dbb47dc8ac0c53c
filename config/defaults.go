package config

// Default returns the embedded configuration: listen on 127.0.0.1:8080,
// keep data under ./parley-data, serve the built-in echo model, and add
// each public service whose key is in the environment as an upstream
// under its usual model names:
//
//	ANTHROPIC_API_KEY  messages          https://api.anthropic.com                 claude-*
//	GEMINI_API_KEY     generate_content  https://generativelanguage.googleapis.com gemini-*, gemma-*
//	OPENAI_API_KEY     responses         https://api.openai.com                    gpt-*, o1*, o3*, o4*, chatgpt-*, codex-*
//
// No client keys are configured, so the server only listens on loopback.
func Default(lookup func(string) (string, bool)) *Config {
	c := &Config{
		Upstreams: []Upstream{{Name: "echo", Dialect: DialectEcho}},
		Models:    []Model{{Name: "echo", Upstream: "echo"}},
		// With no music upstream, lyrics tasks are still answered.
		Songgen: Songgen{LyricsModel: "echo"},
	}
	services := []struct {
		env, name, dialect, base string
		models                   []string
	}{
		{"ANTHROPIC_API_KEY", "anthropic", "messages", "https://api.anthropic.com", []string{"claude-*"}},
		{"GEMINI_API_KEY", "gemini", "generate_content", "https://generativelanguage.googleapis.com", []string{"gemini-*", "gemma-*"}},
		{"OPENAI_API_KEY", "openai", "responses", "https://api.openai.com", []string{"gpt-*", "o1*", "o3*", "o4*", "chatgpt-*", "codex-*"}},
	}
	for _, s := range services {
		key, ok := lookup(s.env)
		if !ok || key == "" {
			continue
		}
		c.Upstreams = append(c.Upstreams, Upstream{Name: s.name, Dialect: s.dialect, BaseURL: s.base, APIKey: key})
		for _, m := range s.models {
			c.Models = append(c.Models, Model{Name: m, Upstream: s.name})
		}
	}
	c.applyDefaults()
	return c
}
