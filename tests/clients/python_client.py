"""Uses the Python client that openapi-python-client generated from /v1/openapi.json as
a new user would: create an edit, follow it to `done` (long polls), download its output.

Usage: python_client.py BASE_URL TOKEN SOURCE_URL OUT_FILE; prints the edit's id.
"""

import sys
from urllib.parse import parse_qs, urlsplit

from mediaedit_client import AuthenticatedClient
from mediaedit_client.api.downloads import download_file
from mediaedit_client.api.edits import create_edit, get_edit
from mediaedit_client.models import AssetIn, CommandName, Edit, EditOptions, NewEdit


def main() -> None:
    base_url, token, source, out = sys.argv[1:5]
    client = AuthenticatedClient(base_url=base_url, token=token, timeout=30.0)
    # The commands and the options are typed: an enum of the registry's command names,
    # one field per option.
    options = EditOptions(scale=0.5)
    body = NewEdit(
        assets=[AssetIn(src=source, type_="image")],
        commands=[CommandName.RESIZE_IMAGE],
        options=options,
    )
    created = create_edit.sync_detailed(client=client, body=body)
    assert created.status_code == 201, created.content
    edit = created.parsed
    assert isinstance(edit, Edit), created.content

    for _ in range(12):
        if edit.attributes.status in ("done", "failed", "canceled"):
            break
        followed = get_edit.sync(client=client, id=edit.id, wait=10)
        assert isinstance(followed, Edit), followed
        edit = followed
    assert edit.attributes.status == "done", edit.to_dict()

    output = edit.attributes.outputs[0]
    assert (output.width, output.height, output.format_) == (160, 120, "png"), output
    # A download URL is the service's own signed URL: its path names the file's key
    # and its query the signature the generated operation takes as parameters.
    url = urlsplit(output.url)
    query = parse_qs(url.query)
    downloaded = download_file.sync_detailed(
        client=client,
        key=url.path.removeprefix("/v1/files/"),
        expires=int(query["expires"][0]),
        signature=query["signature"][0],
    )
    assert downloaded.status_code == 200, downloaded.content
    with open(out, "wb") as f:
        f.write(downloaded.content)
    print(edit.id)


if __name__ == "__main__":
    main()
