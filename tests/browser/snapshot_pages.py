"""Fixture pages of the snapshot rules, one per rule (bodies only; the SDK snippet is added
by ``mao_embed``). Shared with tests/conformance/test_chromium_agreement.py, which compares
our names and roles with Chromium's accessibility tree on every one of them."""

from __future__ import annotations

FORMS = """
<form id="signup" name="signup" action="/signup" method="post" aria-label="Sign up">
  <label for="email">Email address</label> <input id="email" type="email" name="email" required>
  <label>Full name <input name="fullname" value="Ada"></label>
  <input name="city" placeholder="City">
  <input name="zip" title="Postal code">
  <input name="phone" aria-label="Phone number">
  <span id="hint" style="display:none">Coupon code</span><input name="coupon"
    aria-labelledby="hint">
  <fieldset><legend>Plan</legend>
    <label><input type="radio" name="plan" value="basic" checked> Basic</label>
    <label><input type="radio" name="plan" value="pro"> Pro</label>
  </fieldset>
  <label for="country">Country</label>
  <select id="country" name="country"><option value="cn">China</option><option value="fr"
    selected>France</option></select>
  <label for="notes">Notes</label><textarea id="notes" name="notes" readonly>hello</textarea>
  <label><input type="checkbox" name="terms"> I accept the terms</label>
  <label for="age">Age</label><input id="age" type="number" name="age" aria-invalid="true"
    value="-3">
  <input type="submit" value="Create account"> <input type="reset"> <button type="button"
    disabled>Later</button>
</form>
"""

SENSITIVE = """
<form aria-label="Pay">
  <label>Password <input type="password" name="pw" value="hunter2"></label>
  <label>密码 <input name="p2" value="abc123"></label>
  <label>验证码 <input name="code" value="842913"></label>
  <label>银行卡号 <input name="card" value="6222020200112233"></label>
  <label>身份证 <input name="idno" value="110101199003077777"></label>
  <label>One-time code <input autocomplete="one-time-code" name="otp" value="123456"></label>
  <label>Card expiry <input autocomplete="cc-exp" name="exp" value="12/29"></label>
  <label>Nickname <input name="nick" value="ada"></label>
</form>
"""

CUSTOM_CONTROLS = """
<style>
  .cb input { position:absolute; opacity:0; width:0; height:0; }
  .cb .box { display:inline-block; width:14px; height:14px; border:1px solid #333; }
  .hidden-input input { display:none; }
</style>
<label class="cb"><input type="checkbox" id="remember"><span class="box"></span> Remember me</label>
<label class="hidden-input"><input type="checkbox" id="news"> Newsletter</label>
<div role="checkbox" aria-checked="true" tabindex="0">Dark mode</div>
<div role="switch" aria-checked="false" tabindex="0" aria-label="Notifications"
  style="width:30px;height:16px"></div>
<div style="cursor:pointer" onclick="this.dataset.clicked=1"><span>Open report</span></div>
<div style="cursor:pointer" class="wrapper"><button type="button">Inner save</button></div>
<div tabindex="0">Focusable card</div>
<div contenteditable="true" aria-label="Comment"></div>
<details><summary>More options</summary><p>Hidden text</p></details>
<button aria-pressed="true">Bold</button>
<button aria-expanded="false" aria-controls="m">Menu</button>
<div role="tablist"><div role="tab" aria-selected="true" tabindex="0">General</div><div role="tab"
  aria-selected="false" tabindex="-1">Advanced</div></div>
<a href="#help" title="Help center"><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw="
  alt="Help"></a>
<button><span aria-hidden="true">×</span><span class="sr">Close dialog</span></button>
"""

VISIBILITY = """
<style>.clip { overflow:hidden; height:30px; width:200px; }
  .scroll { overflow:auto; height:40px; }</style>
<button>Shown</button>
<button style="display:none">Display none</button>
<button style="visibility:hidden">Visibility hidden</button>
<button style="opacity:0">Transparent</button>
<div style="content-visibility:hidden"><button>Content hidden</button></div>
<div class="clip"><div style="height:30px">filler</div><button>Clipped away</button></div>
<div class="scroll"><div style="height:60px">filler</div><button>Scrolled inside</button></div>
<button style="width:0;height:0;padding:0;border:0;overflow:hidden">Zero size</button>
<div style="height:2000px"></div>
<button>Below the fold</button>
"""

STRUCTURE = """
<header><nav aria-label="Main"><ul><li><a href="/home">Home</a></li><li><a
  href="/orders">Orders</a></li></ul></nav></header>
<main>
  <h1>Orders</h1>
  <p>You have 2 open orders.</p>
  <table>
    <caption>Open orders</caption>
    <tr><th>Order</th><th>Total</th><th>Action</th></tr>
    <tr><td>#1001</td><td>12.50</td><td><button>Cancel #1001</button></td></tr>
    <tr><td>#1002</td><td>99.00</td><td><button>Cancel #1002</button></td></tr>
  </table>
  <dialog open aria-label="Confirm"><form method="dialog"><p>Really cancel?</p><button
    value="yes">Yes</button><button value="no">No</button></form></dialog>
</main>
<footer><a href="/privacy">Privacy</a></footer>
"""

SHADOW_AND_FRAMES = """
<div id="host"><span slot="title">Account</span></div>
<script>
  const root = document.getElementById('host').attachShadow({mode: 'open'});
  root.innerHTML = '<h2><slot name="title"></slot></h2>'
    + '<label>Username <input id="user"></label><button>Sign in</button>';
</script>
<iframe title="Embedded form" style="width:400px;height:120px"
  srcdoc="<label>Frame field <input></label><button>Frame button</button>"></iframe>
"""

PAGES = {
    "forms": FORMS,
    "sensitive": SENSITIVE,
    "custom_controls": CUSTOM_CONTROLS,
    "visibility": VISIBILITY,
    "structure": STRUCTURE,
    "shadow_and_frames": SHADOW_AND_FRAMES,
}
