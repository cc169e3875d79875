package deploy

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNightlyAppendExamples: the CronJob parses with its recipe and job, the recipe appends,
// and the Slurm script is valid bash that runs convert append.
func TestNightlyAppendExamples(t *testing.T) {
	kinds, _ := parseManifest(t, "k8s-cronjob-append.yaml", "1")
	cm, ok := kinds["ConfigMap/convert-append-recipe"]
	if !ok {
		t.Fatalf("no recipe ConfigMap: %v", kinds)
	}
	recipe := cm["data"].(map[string]any)["recipe.yaml"].(string)
	if !strings.Contains(recipe, "mode: append") {
		t.Fatalf("the recipe does not append:\n%s", recipe)
	}
	if _, ok := kinds["CronJob/convert-append"]; !ok {
		t.Fatal("no CronJob convert-append")
	}
	if out, err := exec.Command("bash", "-n", "slurm-append.sbatch").CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
}
