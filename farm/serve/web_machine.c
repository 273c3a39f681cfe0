/* web_machine.c: /machines/NAME, one machine as the farm knows it: its GPUs, compilers
 * and the sanitizers that work with them, CPU, labels, cairn, key, when it enrolled and
 * was last heard from; how many of its jobs are in each state; its latest jobs with
 * their times; its failures (jobs that failed, bundles whose result is FAILED) and the
 * leases it lost. Machine names are one key's at a time (issue 24): a name whose agent
 * was revoked may be enrolled again with another key, and then the page is the agent
 * that holds it now, with the earlier holders below it, each with its key and its own
 * jobs, so that no job signed with one key is shown as another's. */
#include "serve/web_internal.h"

#include <string.h>

#define MACHINE_JOBS 50 /* jobs and failures shown */

static void facts(Server *s, FILE *out, const cJSON *agent) {
    const cJSON *caps = cJSON_GetObjectItemCaseSensitive(agent, "caps");
    fprintf(out, "<dl id=facts><dt>GPUs<dd>");
    web_gpus(out, caps);
    fprintf(out, "<dt>compilers<dd>");
    web_compilers(out, caps);
    fprintf(out, "<dt>CPU<dd>");
    web_text(out, json_str(caps, "cpu"));
    fprintf(out, " (%.0f cores)<dt>labels<dd>", json_num(caps, "cores", 0));
    if (!web_labels(out, caps)) fprintf(out, "-");
    fprintf(out, "<dt>cairn<dd>");
    web_text(out, json_str(caps, "cairn"));
    fprintf(out, "<dt>key<dd><code>");
    web_text(out, json_str(agent, "keyid"));
    fprintf(out, "</code><dt>enrolled<dd>");
    web_time(out, json_num(agent, "enrolled_at", 0));
    fprintf(out, "<dt>last heard from<dd id=last-heard>");
    web_time(out, web_last_heard(s, agent));
    if (json_num(agent, "revoked", 0)) fprintf(out, "<dt>revoked<dd><b>yes</b>");
    fprintf(out, "</dl>");
}

static void jobs_table(FILE *out, const char *id, const cJSON *jobs, const char *none) {
    const cJSON *j;
    if (!cJSON_GetArraySize(jobs)) {
        fprintf(out, "<p id=%s>%s</p>", id, none);
        return;
    }
    fprintf(out,
            "<table id=%s><tr><th>job<th>run<th>cell<th>state<th>attempt<th>claimed (UTC)"
            "<th>took<th>result<th>failure</tr>",
            id);
    cJSON_ArrayForEach(j, jobs) {
        long run = (long)json_num(j, "run", 0);
        fprintf(out, "<tr><td>%.0f<td><a href=\"/runs/%ld\">run %ld</a><td>", json_num(j, "job", 0),
                run, run);
        web_esc(out, json_str(j, "cell_id"));
        fprintf(out, "<td>");
        web_esc(out, json_str(j, "state"));
        web_job_cells(out, j, json_str(j, "failure"));
    }
    fprintf(out, "</table>");
}

/* One holder's job counts by state and its leases lost, as a sentence. */
static void counts(FILE *out, const char *id, const cJSON *held) {
    const cJSON *c;
    int any = 0;
    fprintf(out, "<p id=%s>Its jobs:", id);
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(held, "counts")) {
        fprintf(out, "%s %.0f ", any++ ? "," : "", json_num(c, "n", 0));
        web_esc(out, json_str(c, "state"));
    }
    fprintf(out, "%s; leases lost: %d.</p>", any ? "" : " none yet",
            cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(held, "lost")));
}

/* The agents that held the name before the one shown: each its key, its times and its
 * own jobs (by agent id, never by name). */
static void earlier_holders(Server *s, FILE *out, const char *name, const cJSON *previous) {
    if (!cJSON_GetArraySize(previous)) return;
    fprintf(out, "<h2 id=earlier>Earlier holders of this name</h2><p class=small>Agents that "
                 "enrolled as ");
    web_esc(out, name);
    fprintf(out, " with another key, since revoked. The lists above are the top agent's "
                 "alone; what each earlier one ran is here, under the key that signed it.</p>");
    const cJSON *a;
    cJSON_ArrayForEach(a, previous) {
        long id = (long)json_num(a, "id", 0);
        const cJSON *held = cJSON_GetObjectItemCaseSensitive(a, "held");
        fprintf(out, "<h3 id=agent-%ld>key <code>", id);
        web_text(out, json_str(a, "keyid"));
        fprintf(out, "</code>%s</h3><p>enrolled ", json_num(a, "revoked", 0) ? " (revoked)" : "");
        web_time(out, json_num(a, "enrolled_at", 0));
        fprintf(out, "; last heard from ");
        web_time(out, web_last_heard(s, a));
        fprintf(out, "</p>");
        char tag[48];
        snprintf(tag, sizeof tag, "counts-%ld", id);
        counts(out, tag, held);
        snprintf(tag, sizeof tag, "jobs-%ld", id);
        jobs_table(out, tag, cJSON_GetObjectItemCaseSensitive(held, "jobs"), "No job.");
    }
}

void web_machine(Server *s, Request *q, Reply *r) {
    cJSON *m = util_is_safe_component(q->arg) ? db_machine_view(s->db, q->arg, MACHINE_JOBS) : NULL;
    if (!m) {
        reply_error(r, PROTO_E_NOT_FOUND, "no machine %s", q->arg);
        return;
    }
    char title[200], *html = NULL;
    size_t len = 0;
    snprintf(title, sizeof title, "machine %s", q->arg);
    FILE *out = web_page_open(&html, &len, title, 10);
    facts(s, out, cJSON_GetObjectItemCaseSensitive(m, "agent"));
    counts(out, "counts", m);
    fprintf(out, "<h2>Latest jobs</h2>");
    jobs_table(out, "jobs", cJSON_GetObjectItemCaseSensitive(m, "jobs"), "No job yet.");
    fprintf(out, "<h2>Failures</h2><p class=small>Jobs that failed, and bundles whose "
                 "result is FAILED (a case failed a check).</p>");
    jobs_table(out, "failures", cJSON_GetObjectItemCaseSensitive(m, "failures"), "None.");
    const cJSON *c, *lost = cJSON_GetObjectItemCaseSensitive(m, "lost");
    if (cJSON_GetArraySize(lost)) {
        fprintf(out, "<h2>Leases lost</h2><table id=lost><tr><th>job<th>when</tr>");
        cJSON_ArrayForEach(c, lost) {
            fprintf(out, "<tr><td>%.0f<td>", json_num(c, "job", 0));
            web_time(out, json_num(c, "at", 0));
            fprintf(out, "</tr>");
        }
        fprintf(out, "</table>");
    }
    earlier_holders(s, out, q->arg, cJSON_GetObjectItemCaseSensitive(m, "previous"));
    cJSON_Delete(m);
    web_page_close(out, &html, &len, r);
}
