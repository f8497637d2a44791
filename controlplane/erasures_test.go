package controlplane_test

import (
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/cairnkg/cairn/controlplane"
)

// TestUserErasureRuns: one run at a time works on a user's erasure. A
// second run is refused while the first holds it, naming it; only the
// holder records progress, renews or finishes; a run whose hold lapsed is
// taken over (and then told it lost it); a run of a process of this host
// that no longer exists is taken over at once.
func TestUserErasureRuns(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *controlplane.Store) {
		ctx := t.Context()
		u, err := s.CreateUser(ctx, "erin")
		if err != nil {
			t.Fatal(err)
		}
		a := controlplane.ErasureRun{Runner: controlplane.NewErasureRunner(), Lease: time.Hour}
		b := controlplane.ErasureRun{Runner: controlplane.NewErasureRunner(), Lease: time.Hour}
		job, resumed, err := s.BeginUserErasure(ctx, u.ID, "access", "operator", "", a)
		if err != nil || resumed {
			t.Fatalf("first run: %+v, resumed %v, %v", job, resumed, err)
		}
		var busy *controlplane.ErasureBusyError
		if _, _, err := s.BeginUserErasure(ctx, u.ID, "access", "operator", "", b); !errors.As(err, &busy) || busy.ID != job.ID || busy.Runner != a.Runner {
			t.Fatalf("second run while the first holds it: %v, want ErasureBusyError naming %s and %s", err, job.ID, a.Runner)
		}
		if err := s.ProgressUserErasure(ctx, job.ID, b.Runner, "entities", map[string]int{}); !errors.Is(err, controlplane.ErrErasureLost) {
			t.Errorf("progress by a run that does not hold it: %v, want ErrErasureLost", err)
		}
		if err := s.RenewUserErasure(ctx, job.ID, b); !errors.Is(err, controlplane.ErrErasureLost) {
			t.Errorf("renewal by a run that does not hold it: %v, want ErrErasureLost", err)
		}
		if err := s.ProgressUserErasure(ctx, job.ID, a.Runner, "entities", map[string]int{"entities": 3}); err != nil {
			t.Fatal(err)
		}
		// The same run beginning again (a retry in one process) resumes.
		if again, resumed, err := s.BeginUserErasure(ctx, u.ID, "access", "operator", "", a); err != nil || !resumed || again.Phase != "entities" {
			t.Fatalf("the holder again: %+v, resumed %v, %v", again, resumed, err)
		}

		// A hold that lapsed is taken over; its old holder is told.
		short := controlplane.ErasureRun{Runner: a.Runner, Lease: time.Millisecond}
		if err := s.RenewUserErasure(ctx, job.ID, short); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		taken, resumed, err := s.BeginUserErasure(ctx, u.ID, "access", "operator", "", b)
		if err != nil || !resumed || taken.ID != job.ID || taken.Counts["entities"] != 3 {
			t.Fatalf("taking over a lapsed hold: %+v, resumed %v, %v", taken, resumed, err)
		}
		if err := s.RenewUserErasure(ctx, job.ID, a); !errors.Is(err, controlplane.ErrErasureLost) {
			t.Errorf("the old holder renews: %v, want ErrErasureLost", err)
		}
		if _, err := s.FinishUserErasure(ctx, job.ID, a.Runner, nil); !errors.Is(err, controlplane.ErrErasureLost) {
			t.Errorf("the old holder finishes: %v, want ErrErasureLost", err)
		}

		// A run of a process of this host that is gone (a crash) is
		// taken over at once, its lease notwithstanding.
		host, _ := os.Hostname()
		gone := controlplane.ErasureRun{Runner: fmt.Sprintf("%s/%d/x", host, deadPID(t)), Lease: time.Hour}
		if _, _, err := s.BeginUserErasure(ctx, u.ID, "access", "operator", "", gone); !errors.As(err, &busy) {
			t.Fatalf("a new run while a live one holds the erasure: %v, want ErasureBusyError", err)
		}
		other, err := s.CreateUser(ctx, "otto")
		if err != nil {
			t.Fatal(err)
		}
		crashed, _, err := s.BeginUserErasure(ctx, other.ID, "access", "operator", "", gone)
		if err != nil {
			t.Fatal(err)
		}
		if got, resumed, err := s.BeginUserErasure(ctx, other.ID, "access", "operator", "", b); err != nil || !resumed || got.ID != crashed.ID {
			t.Fatalf("taking over a crashed run's erasure: %+v, resumed %v, %v", got, resumed, err)
		}
		if done, err := s.FinishUserErasure(ctx, crashed.ID, b.Runner, nil); err != nil || done.Status != controlplane.ErasureDone {
			t.Fatalf("finish by the run that took over: %+v, %v", done, err)
		}
	})
}

// deadPID returns the id of a process that has ended.
func deadPID(t *testing.T) int {
	t.Helper()
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Skipf("cannot start /bin/true: %v", err)
	}
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	return p.Pid
}
