package secrets

import (
	"errors"
	"strings"
	"testing"
)

// realistic holds one credential of each kind Scan knows.
var realistic = map[string]string{
	"AWS access key id":     "deploy uses AKIAQYLPMN5HHHFPZAM2 for s3 uploads",
	"AWS secret access key": "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKQ",
	"GitHub token":          "export GH_TOKEN=ghp_4fT9kL2mQ8xR7vB1nC3dE5gH6jK0pW2sY9zA",
	"Slack token":           "bot token is xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
	"Slack webhook":         "alerts go to https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
	"OpenAI API key":        "OPENAI key sk-proj-Q3v9ZtY7pL2kX8mN4bR6cW1dF5gH0jS9aT3uV7eK",
	"Anthropic API key":     "claude key sk-ant-api03-Zq8Lm3Np7Rt2Vx9Ky4Bw6Cd1Fg5Hj0Ks",
	"private key block":     "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
	"credential assignment": "db config: password=Xk9#mQ2$vL7pR4wZ",
	"password in URL":       "DATABASE_URL=postgres://billing:S3cr3tPa55w0rd@db.internal:5432/billing",
	"Google API key":        "maps key AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
	"JSON web token":        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}

func TestScanFindsRealisticCredentials(t *testing.T) {
	for kind, text := range realistic {
		f := Scan(text)
		found := false
		for _, x := range f {
			if x.Kind == kind {
				found = true
				if strings.Contains(text, x.Masked) && len(x.Masked) > 8 {
					t.Errorf("%s: masked value %q leaks the secret", kind, x.Masked)
				}
			}
		}
		if !found {
			t.Errorf("%s not found in %q (got %+v)", kind, text, f)
		}
	}
}

// Redact takes out every credential Scan finds and keeps the text around it.
func TestRedactRemovesWhatScanFinds(t *testing.T) {
	for kind, text := range realistic {
		got, n := Redact("before " + text + " after")
		if n == 0 || len(Scan(got)) != 0 || !strings.Contains(got, "[redacted ") ||
			!strings.HasPrefix(got, "before ") || !strings.HasSuffix(got, " after") {
			t.Errorf("%s: Redact(%q) = %q, %d", kind, text, got, n)
		}
	}
	if got, n := Redact("plain words about tokens and keys"); n != 0 || got != "plain words about tokens and keys" {
		t.Errorf("ordinary text changed: %q, %d", got, n)
	}
}

// A token glued to a name by "_", "-", a letter or a digit is still a
// token: \b does not
// match between "_" and a letter, so AWS_KEY_AKIA… passed.
func TestScanFindsTokensAfterUnderscores(t *testing.T) {
	for kind, text := range map[string]string{
		"AWS access key id":  "AWS_KEY_AKIAQYLPMN5HHHFPZAM2",
		"GitHub token":       "GH_TOKEN_ghp_4fT9kL2mQ8xR7vB1nC3dE5gH6jK0pW2sY9zA",
		"Slack token":        "slack_xoxb-123456789012-abcdefghijklmnop",
		"GitLab token":       "gitlab:glpat-x7k2m9q4w8e1r5t3y6u0",
		"npm token":          "NPM_TOKEN=npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
		"GitHub token ":      "x0ghp_4fT9kL2mQ8xR7vB1nC3dE5gH6jK0pW2sY9zA",
		"AWS access key id ": "0AKIAQYLPMN5HHHFPZAM2 and TEAKIAQYLPMN5HHHFPZAM2",
	} {
		found := false
		for _, x := range Scan(text) {
			found = found || x.Kind == strings.TrimSpace(kind)
		}
		if !found {
			t.Errorf("%s not found in %q", kind, text)
		}
	}
	if f := Scan("task-manager-cli-for-the-whole-team continues a word"); len(f) != 0 {
		t.Errorf("sk- inside a word was taken for a key: %+v", f)
	}
}

func TestScanFieldsNamesTheField(t *testing.T) {
	err := Error(ScanFields([]Field{{"content", "nothing here"}, {"tags", "xoxb-123456789012-abcdefghijklmnop"}}))
	if !errors.Is(err, ErrSecret) || !strings.Contains(err.Error(), "Slack token in tags on line 1") {
		t.Fatalf("err = %v", err)
	}
}

func TestScanIgnoresOrdinaryText(t *testing.T) {
	for _, text := range []string{
		"we chose postgres for billing because of transactional guarantees",
		"set password=${DB_PASSWORD} from the environment",
		"the token field is required: token = <your token here>",
		"password = changeme in the docker-compose example",
		"see commit 3f2a9c1d4e5b6a7f8091a2b3c4d5e6f708192a3b for the fix",
		"use the api_key from os.getenv(\"API_KEY\")",
		"sk-learn is a typo for scikit-learn",
		"passwords must be rotated every 90 days",
		"password := os.Args[4]",
		"tokenResp.RefreshToken = refreshToken",
		"AllowSecret: o.allowSecret, Related: o.related",
		`// Example: Bearer resource_metadata="https://resource.example.com/.well-known/oauth"`,
		"OLDPWD=/home/dev/projects/billing",
		"run it with 50%25 of the budget &amp; retry at 100%",
		"the base64 of an image: iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==",
	} {
		if f := Scan(text); len(f) > 0 {
			t.Errorf("false positive in %q: %+v", text, f)
		}
	}
}

func TestCheckWrapsErrSecret(t *testing.T) {
	err := Check("key AKIAQYLPMN5HHHFPZAM2")
	if !errors.Is(err, ErrSecret) || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("want ErrSecret naming the line, got %v", err)
	}
	if Check("nothing here") != nil {
		t.Fatal("clean text refused")
	}
}
