// Uses the TypeScript client made by openapi-typescript (types from /v1/openapi.json,
// in ./schema.d.ts) and openapi-fetch as a new user would: create an edit, follow it to
// `done` (long polls), download its output. Type-checked with `tsc --strict`.
//
// Usage: node typescript_client.js BASE_URL TOKEN SOURCE_URL OUT_FILE; prints the id.

import { writeFileSync } from "node:fs";
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

type Edit = components["schemas"]["Edit"];

function check(condition: boolean, what: string): asserts condition {
  if (!condition) {
    throw new Error(what);
  }
}

async function main(): Promise<void> {
  const [baseUrl, token, source, out] = process.argv.slice(2);
  check(
    baseUrl !== undefined && token !== undefined && source !== undefined && out !== undefined,
    "usage: typescript_client.js BASE_URL TOKEN SOURCE_URL OUT_FILE",
  );
  const client = createClient<paths>({
    baseUrl,
    headers: { Authorization: `Bearer ${token}` },
  });

  const created = await client.POST("/v1/edits", {
    body: {
      assets: [{ type: "image", src: source }],
      commands: ["resize-image"],
      options: { scale: 0.5 },
    },
  });
  check(created.response.status === 201, `not created: ${JSON.stringify(created.error)}`);
  check(created.data !== undefined && "relationships" in created.data, "no Edit document");
  let edit: Edit = created.data;

  for (let i = 0; i < 12 && !["done", "failed", "canceled"].includes(edit.attributes.status); i++) {
    const followed = await client.GET("/v1/edits/{id}", {
      params: { path: { id: edit.id }, query: { wait: 10 } },
    });
    check(followed.data !== undefined, `reading the edit: ${JSON.stringify(followed.error)}`);
    edit = followed.data;
  }
  check(edit.attributes.status === "done", `edit ended ${JSON.stringify(edit.attributes)}`);

  const output = edit.attributes.outputs?.[0];
  check(output !== undefined, "no output");
  check(
    output.width === 160 && output.height === 120 && output.format === "png",
    `output ${JSON.stringify(output)}`,
  );
  // A download URL is the service's own signed URL: its path names the file's key and
  // its query the signature, which the typed operation takes as parameters.
  const url = new URL(output.url);
  const downloaded = await client.GET("/v1/files/{key}", {
    params: {
      path: { key: url.pathname.replace(/^\/v1\/files\//, "") },
      query: {
        expires: Number(url.searchParams.get("expires")),
        signature: url.searchParams.get("signature") ?? "",
      },
    },
    parseAs: "arrayBuffer",
  });
  check(downloaded.response.status === 200, `download: ${downloaded.response.status}`);
  check(downloaded.data !== undefined, "no bytes");
  writeFileSync(out, Buffer.from(downloaded.data));
  console.log(edit.id);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
