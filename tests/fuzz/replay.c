/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replays every file of the corpus folders (or the files) given on the
 * command line through a libFuzzer target, so the corpora run as ordinary
 * tests with any compiler. A crash or sanitizer report fails the test; so does an empty
 * corpus (a replay that runs nothing proves nothing).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long len;

	if (f == NULL)
		return -1;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(len > 0 ? (size_t)len : 1);
	if (buf == NULL || (len > 0 && fread(buf, 1, (size_t)len, f) != (size_t)len)) {
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	/* An exact-size heap copy so ASan catches any read past the end. */
	LLVMFuzzerTestOneInput(buf, (size_t)len);
	free(buf);
	return 0;
}

int
main(int argc, char **argv)
{
	int files = 0;

	for (int i = 1; i < argc; i++) {
		struct stat fst;
		DIR *d;
		struct dirent *e;

		if (stat(argv[i], &fst) == 0 && S_ISREG(fst.st_mode)) {
			/* One input (a crash a fuzzer wrote, say). */
			if (run_file(argv[i]) != 0) {
				fprintf(stderr, "replay: cannot read %s\n", argv[i]);
				return 1;
			}
			files++;
			continue;
		}
		d = opendir(argv[i]);
		if (d == NULL) {
			fprintf(stderr, "replay: cannot open %s\n", argv[i]);
			return 1;
		}
		while ((e = readdir(d)) != NULL) {
			char path[4096];
			struct stat st;

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
				continue;
			if (run_file(path) != 0) {
				fprintf(stderr, "replay: cannot read %s\n", path);
				closedir(d);
				return 1;
			}
			files++;
		}
		closedir(d);
	}
	printf("replayed %d inputs\n", files);
	return files > 0 ? 0 : 1;
}
