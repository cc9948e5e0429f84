package shop;

class Forms {
    String handle(Request request) {
        // ok: java/method-guard-removed
        return "page";
    }
}
