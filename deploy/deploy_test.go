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

func TestK8sIndexedJob(t *testing.T) {
	b, err := os.ReadFile("k8s-indexed-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	kinds := map[string]map[string]any{}
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("k8s-indexed-job.yaml: %v", err)
		}
		name := doc["metadata"].(map[string]any)["name"].(string)
		kinds[doc["kind"].(string)+"/"+name] = doc
	}
	shards, ok := kinds["Job/convert-shards"]
	if !ok || kinds["Job/convert-merge"] == nil || kinds["ConfigMap/convert-recipe"] == nil || kinds["PersistentVolumeClaim/convert-out"] == nil {
		t.Fatalf("objects: %v", keys(kinds))
	}
	spec := shards["spec"].(map[string]any)
	if spec["completionMode"] != "Indexed" {
		t.Fatalf("completionMode %v", spec["completionMode"])
	}
	n := spec["completions"].(int)
	// --shards, the wait loop's TASKS and the completions must agree.
	text := string(b)
	if !strings.Contains(text, `args: ["--shards", "`+strconv.Itoa(n)+`"`) {
		t.Errorf("--shards does not match completions %d", n)
	}
	if !regexp.MustCompile(`name: TASKS, value: "` + strconv.Itoa(n) + `"`).MatchString(text) {
		t.Errorf("TASKS of the merge's initContainer does not match completions %d", n)
	}
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
	b, err := os.ReadFile("k8s-indexed-job-bucket.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	kinds := map[string]map[string]any{}
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("k8s-indexed-job-bucket.yaml: %v", err)
		}
		name := doc["metadata"].(map[string]any)["name"].(string)
		kinds[doc["kind"].(string)+"/"+name] = doc
	}
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
	spec := shards["spec"].(map[string]any)
	n := spec["completions"].(int)
	text := string(b)
	if spec["completionMode"] != "Indexed" || !strings.Contains(text, `args: ["--shards", "`+strconv.Itoa(n)+`"`) ||
		!strings.Contains(text, `name: TASKS, value: "`+strconv.Itoa(n)+`"`) {
		t.Errorf("completions %d, --shards and TASKS disagree", n)
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
