// Package deploy holds the cluster examples (a Slurm job array and a Kubernetes Indexed Job,
// each followed by the merge); its test checks that they parse and agree with themselves.
package deploy

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// parseManifest reads a manifest with ${SHARDS} replaced by shards and returns its objects by
// kind/name.
func parseManifest(t *testing.T, file, shards string) (map[string]map[string]any, string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(b), "${SHARDS}", shards)
	dec := yaml.NewDecoder(strings.NewReader(text))
	kinds := map[string]map[string]any{}
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		name := doc["metadata"].(map[string]any)["name"].(string)
		kinds[doc["kind"].(string)+"/"+name] = doc
	}
	return kinds, text
}

// checkShardsJob checks the Indexed Job of a manifest: N (the number of slices) is given once,
// as SHARDS, and used for completions, convert's --shards and the merge's TASKS; no number
// of slices is written anywhere else. Its podFailurePolicy fails an index at once on
// convert's exit status 1, 2 or 3 (a retry gives the same result) and retries disruptions
// without counting them.
func checkShardsJob(t *testing.T, file string) map[string]map[string]any {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// Every use of N is ${SHARDS}: completions, --shards, TASKS.
	for _, want := range []string{"completions: ${SHARDS}", `"--shards", "${SHARDS}"`, `name: TASKS, value: "${SHARDS}"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("%s: no %s", file, want)
		}
	}
	if m := regexp.MustCompile(`(?m)^\s*(completions|parallelism):\s*\d`).FindString(string(raw)); m != "" {
		t.Errorf("%s: a literal count: %q (use ${SHARDS})", file, m)
	}
	if m := regexp.MustCompile(`"--shards",\s*"\d|TASKS, value: "\d`).FindString(string(raw)); m != "" {
		t.Errorf("%s: a literal count: %q (use ${SHARDS})", file, m)
	}
	const n = 37 // a value found nowhere else in the file
	if strings.Contains(string(raw), strconv.Itoa(n)) {
		t.Fatalf("%s holds %d: pick another test value", file, n)
	}
	kinds, text := parseManifest(t, file, strconv.Itoa(n))
	shards := kinds["Job/convert-shards"]
	if shards == nil || kinds["Job/convert-merge"] == nil {
		t.Fatalf("%s: objects: %v", file, keys(kinds))
	}
	spec := shards["spec"].(map[string]any)
	if spec["completionMode"] != "Indexed" || spec["completions"] != n {
		t.Errorf("%s: completionMode %v, completions %v, want Indexed, %d", file, spec["completionMode"], spec["completions"], n)
	}
	if got := strings.Count(text, strconv.Itoa(n)); got != 4 { // completions, parallelism, --shards, TASKS
		t.Errorf("%s: N appears %d times after substitution, want 4 (completions, parallelism, --shards, TASKS)", file, got)
	}
	pod := spec["template"].(map[string]any)["spec"].(map[string]any)
	if pod["restartPolicy"] != "Never" {
		t.Errorf("%s: restartPolicy %v: a podFailurePolicy needs Never", file, pod["restartPolicy"])
	}
	if _, ok := spec["backoffLimitPerIndex"]; !ok {
		t.Errorf("%s: no backoffLimitPerIndex", file)
	}
	pfp, _ := spec["podFailurePolicy"].(map[string]any)
	rules, _ := pfp["rules"].([]any)
	failsExits, ignoresDisruption := false, false
	for _, r := range rules {
		rule := r.(map[string]any)
		if ex, ok := rule["onExitCodes"].(map[string]any); ok && rule["action"] == "FailIndex" && ex["operator"] == "In" &&
			ex["containerName"] == "convert" {
			vals := map[int]bool{}
			for _, v := range ex["values"].([]any) {
				vals[v.(int)] = true
			}
			failsExits = vals[1] && vals[2] && vals[3] && !vals[130]
		}
		if conds, ok := rule["onPodConditions"].([]any); ok && rule["action"] == "Ignore" {
			for _, c := range conds {
				ignoresDisruption = ignoresDisruption || c.(map[string]any)["type"] == "DisruptionTarget"
			}
		}
	}
	if !failsExits || !ignoresDisruption {
		t.Errorf("%s: podFailurePolicy %v: want FailIndex on convert's exit 1, 2, 3 and Ignore on DisruptionTarget", file, pfp)
	}
	return kinds
}

func TestK8sIndexedJob(t *testing.T) {
	kinds := checkShardsJob(t, "k8s-indexed-job.yaml")
	if kinds["ConfigMap/convert-recipe"] == nil || kinds["PersistentVolumeClaim/convert-out"] == nil {
		t.Fatalf("objects: %v", keys(kinds))
	}
	_, text := parseManifest(t, "k8s-indexed-job.yaml", "8")
	// The recipe in the ConfigMap is a valid YAML document with the output the wait loop uses.
	var recipe struct {
		Output string `yaml:"output"`
	}
	cm := kinds["ConfigMap/convert-recipe"]["data"].(map[string]any)["recipe.yaml"].(string)
	if err := yaml.Unmarshal([]byte(cm), &recipe); err != nil {
		t.Fatalf("recipe: %v", err)
	}
	if !strings.Contains(text, `value: `+strings.TrimSuffix(recipe.Output, ".mldf")+`}`) {
		t.Errorf("the wait loop's OUT does not match the recipe's output %s", recipe.Output)
	}
}

func TestSlurmScript(t *testing.T) {
	out, err := exec.Command("bash", "-n", "slurm-array.sbatch").CombinedOutput()
	if err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
	b, _ := os.ReadFile("slurm-array.sbatch")
	for _, want := range []string{"--dependency=afterok:", "--array=0-", `run "$RECIPE"`, `merge "$RECIPE"`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("slurm-array.sbatch lacks %q", want)
		}
	}
	if _, err := exec.LookPath("shellcheck"); err == nil {
		if out, err := exec.Command("shellcheck", "-s", "bash", "slurm-array.sbatch").CombinedOutput(); err != nil {
			t.Errorf("shellcheck: %v\n%s", err, out)
		}
	}
}

func keys(m map[string]map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// The bucket example: an Indexed Job with no data volume (the recipe's ConfigMap only), the
// output a bucket URL, --shards = completions = TASKS, and no credentials in the recipe.
func TestK8sIndexedJobBucket(t *testing.T) {
	kinds := checkShardsJob(t, "k8s-indexed-job-bucket.yaml")
	_, text := parseManifest(t, "k8s-indexed-job-bucket.yaml", "8")
	shards := kinds["Job/convert-shards"]
	if shards == nil || kinds["Job/convert-merge"] == nil || kinds["ServiceAccount/convert"] == nil {
		t.Fatalf("objects: %v", keys(kinds))
	}
	for k := range kinds {
		if strings.HasPrefix(k, "PersistentVolumeClaim/") {
			t.Errorf("%s: the bucket example must not need a volume", k)
		}
	}
	for _, job := range []string{"Job/convert-shards", "Job/convert-merge"} {
		pod := kinds[job]["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		for _, v := range pod["volumes"].([]any) {
			if _, ok := v.(map[string]any)["configMap"]; !ok {
				t.Errorf("%s: volume %v is not the recipe's ConfigMap", job, v)
			}
		}
		if pod["serviceAccountName"] != "convert" {
			t.Errorf("%s: no service account (the pod's identity holds the credentials)", job)
		}
	}
	var recipe struct {
		Output string `yaml:"output"`
		Source struct {
			Path string `yaml:"path"`
		} `yaml:"source"`
	}
	cm := kinds["ConfigMap/convert-recipe-bucket"]["data"].(map[string]any)["recipe.yaml"].(string)
	if err := yaml.Unmarshal([]byte(cm), &recipe); err != nil {
		t.Fatalf("recipe: %v", err)
	}
	if !strings.HasPrefix(recipe.Output, "s3://") || !strings.HasPrefix(recipe.Source.Path, "s3://") {
		t.Errorf("recipe reads %q and writes %q: want bucket URLs", recipe.Source.Path, recipe.Output)
	}
	if !strings.Contains(text, "value: "+strings.TrimSuffix(recipe.Output, ".mldf")+"}") {
		t.Errorf("the wait loop's OUT does not match the recipe's output %s", recipe.Output)
	}
	if strings.Contains(strings.ToLower(cm), "secret") || strings.Contains(cm, "AWS_") {
		t.Errorf("credentials in the recipe")
	}
}
